// The RDMA verbs capture: the rdma_verbs BPF object in one RAII owner, and the uprobes it places
// at run time. Destroying it detaches every probe before the object goes.
//
// Discovery: every scan (once a second) reads /proc/*/maps; each libibverbs file not yet probed,
// identified by (device, inode), gets return probes on ibv_open_device and ibv_create_qp and a
// probe on ibv_modify_qp, at their versioned file offsets. A process in another mount namespace
// is reached through /proc/PID/root, so a private copy of the library is its own file. The
// return probes report the provider's post_send/poll_cq addresses; each is mapped through that
// process's maps to (device, inode, offset) and probed once, for every process mapping the file.
// The libibverbs of the agent's own root is probed at start, so processes that start later are
// covered from their first call. A QP counts (and numbers) messages only when its provider's
// functions were already probed at its RTR: the agent marks each probed function in a map that
// the kernel side checks then. Probes on files that no process maps any more and that the agent
// cannot see at the same path (a private copy in a mount namespace that is gone) are removed at
// the next scan.
// Extended CQs (rdma_capture_ex.cpp): ibv_open_device also reports the provider's create_cq_ex
// and query_rt_values, which get probed; each create_cq_ex result reports that CQ's poll and read
// functions, probed the same way. query_rt_values calls are samples of the NIC clock, kept per
// (process, context); a receive half with a NIC completion stamp gets it, mapped to
// CLOCK_MONOTONIC, in place of the probe's time when it maps plausibly (rdma_nic_clock.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "capture/counter_slices.hpp"
#include "capture/rdma_gid.hpp"
#include "capture/rdma_nic_clock.hpp"
#include "capture/rdma_source.hpp"
#include "skewscope/result.hpp"

struct rdma_verbs;  // generated skeleton
struct ring_buffer;
struct bpf_link;
struct bpf_program;

namespace skewscope {

class RdmaCapture {
 public:
  using Log = void (*)(const std::string&);
  using Opened = Result<std::unique_ptr<RdmaCapture>>;
  static Opened open(Log log);
  ~RdmaCapture();
  RdmaCapture(const RdmaCapture&) = delete;
  RdmaCapture& operator=(const RdmaCapture&) = delete;

  // Waits at most `timeout`, appends the records read (at most kMaxBatch), attaches the provider
  // functions they reveal, and rescans processes when a scan is due. False: the ring failed.
  bool poll(std::vector<skewscope_rdma_event>& out, std::chrono::milliseconds timeout);
  static constexpr std::size_t kMaxBatch = 8192;
  RdmaSourceCounters counters() const;
  const std::string& error() const { return error_; }
  void scan_processes();

 private:
  // (device, inode, offset, program): one probe.
  using ProbeKey = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, const bpf_program*>;
  struct Probe {
    bpf_link* link = nullptr;
    std::uint64_t dev = 0, inode = 0;
    bool library = false;  // a libibverbs entry point (else a provider function)
    std::uint64_t offset = 0;
    bool visible = false;  // the file is at the same path in the agent's mount namespace: kept
  };

  RdmaCapture() = default;
  static int on_record(void* ctx, void* data, std::size_t size);
  // `path` names the file (through /proc/PID/root for another mount namespace); `opened`, when
  // given, is an already open descriptor's path for the same file (/proc/self/fd/N), which stays
  // valid after the process that revealed the file has exited.
  bool attach(std::uint64_t dev, std::uint64_t inode, std::uint64_t offset, bpf_program* prog, bool retprobe,
              const std::string& path, bool library, const std::string& opened = {});
  // `file`: the path to open (through /proc/PID/root for another mount namespace).
  void attach_library(const std::string& file, std::uint64_t dev, std::uint64_t inode, bool visible);
  void arm(std::uint64_t inode, std::uint64_t offset, bool on);
  void attach_provider(const skewscope_rdma_event& e);
  void resolve_local_gid(skewscope_rdma_event& e);
  // rdma_capture_ex.cpp
  void attach_extended(const skewscope_rdma_event& e);  // CONTEXT: create_cq_ex, query_rt_values; CQ_EX
  void sample_clock(const skewscope_rdma_event& e);
  void stamp(skewscope_rdma_event& e);                   // a half's ts_ns / ts_source, counted by outcome
  bool extended_program(const bpf_program* prog) const;  // an extended-CQ / NIC clock program

  Log log_ = nullptr;
  rdma_verbs* skel_ = nullptr;
  std::optional<CounterSlices> counters_;  // rdma_counters, mapped once loaded
  ring_buffer* ring_ = nullptr;
  std::vector<skewscope_rdma_event>* sink_ = nullptr;
  std::map<ProbeKey, Probe> probes_;
  GidTableDirs gid_dirs_;
  std::chrono::steady_clock::time_point next_scan_{};
  RdmaSourceCounters stats_;                                 // the non-kernel part; kernel counters are read on demand
  std::vector<skewscope_rdma_event> discovered_cqs_;         // CQ_EX records of this poll, probed after the ring pass
  using ClockKey = std::pair<std::uint32_t, std::uint64_t>;  // (pid, verbs context): one NIC clock
  std::map<ClockKey, rdma::NicClock> clocks_;
  static constexpr std::size_t kMaxClocks = 4096;
  std::int64_t realtime_minus_monotonic_ns_ = 0;  // read once per poll, when a wall-clock stamp needs it
  std::string error_;
};

}  // namespace skewscope
