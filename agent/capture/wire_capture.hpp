// The wire-level EventSource's kernel side: the wire_tc BPF object, attached with tc (clsact) to
// the interfaces the operator named (--wire-timestamps) and to no other, in one RAII object.
//
// What it changes on the system, and undoes when destroyed:
//  - per named interface: a clsact qdisc, only if the interface had none (a clsact that was
//    already there is left alone and kept on exit), and two tc filters (ingress and egress, at a
//    fixed handle and priority, running wire_ingress / wire_egress);
//  - the net_timestamp static key: it holds one socket with SO_TIMESTAMPING (receive software
//    stamps), so the kernel stamps every received packet with CLOCK_REALTIME (skb->tstamp) while
//    the agent runs. The key is a counter shared with every other timestamping socket on the
//    host: closing the socket gives back this agent's reference only.
// Crash recovery: a clsact the agent created is marked in kWireStateDir; a later agent that finds
// the mark of a process that is gone treats that qdisc as its own (removes it on exit), and a
// filter of ours left at our handle/priority is replaced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/counter_slices.hpp"
#include "capture/family_status.hpp"
#include "capture/features.hpp"
#include "capture/wire_counters.hpp"
#include "capture/wire_programs.hpp"
#include "skewscope/abi/wire_event.h"
#include "skewscope/result.hpp"

struct ring_buffer;
struct bpf_link;

namespace skewscope {

inline constexpr const char* kWireStateDir = "/run/skewscope/wire";

// One --wire-timestamps entry: IFACE (in the agent's own network namespace) or
// IFACE@NETNS_PATH (e.g. eth0@/run/netns/lab-h1, for lab hosts).
struct WireInterface {
  std::string name;
  std::string netns_path;  // empty: the agent's own namespace
  std::string label() const { return netns_path.empty() ? name : name + "@" + netns_path; }
};

// Parses the comma-separated lists of every --wire-timestamps flag; duplicates are an error.
Result<std::vector<WireInterface>> parse_wire_interfaces(const std::vector<std::string>& specs);

// --wire-cgroup PATH: a cgroup v2 directory whose sockets get the sock_ops TX timestamping send
// side. Refuses what is not a cgroup v2 directory, and the root cgroup (the whole host).
Status check_wire_cgroup(const std::string& path);

// The send side (features.hpp's wire_send candidates): sock_ops TX timestamping for
// --wire-cgroup's sockets where the kernel has the callbacks (Linux 6.14) and loads them, else tc
// egress on the named interfaces.
inline constexpr const char* kSendPathSockOps = "sock_ops";
inline constexpr const char* kSendPathTcEgress = "tc_egress";

struct WireOptions {
  std::vector<WireInterface> interfaces;
  std::vector<std::string> cgroups;  // --wire-cgroup
  bool ack_samples = false;          // --wire-ack-samples: pure ACKs are reverse one-way samples
};

struct WireAttachment {
  WireInterface iface;
  int ifindex = 0;
  std::uint32_t netns_ino = 0;
  bool created_qdisc = false;         // the agent added the clsact (and removes it on exit)
  bool recovered_filters = false;     // filters of a dead agent were found and replaced
  int phc_index = -1;                 // ethtool timestamping info: the NIC's PHC, -1 when none
  std::uint32_t so_timestamping = 0;  // ethtool's SOF_TIMESTAMPING_* capabilities
};

class WireCapture;
// What open() did: the capture (null when no tc variant loads on this kernel: the wire family is
// then off, and `wire` says why), and which candidate serves each side.
struct WireOpened {
  std::unique_ptr<WireCapture> capture;
  FamilyStatus wire;
  FamilyStatus send;
};

class WireCapture {
 public:
  // Chooses and loads the tc variant and the send side by the candidate tables, then attaches.
  // An error only for what the operator can fix (an interface or namespace that is not there, a
  // foreign filter in our place); a kernel that refuses every candidate is a WireOpened without
  // capture.
  static Result<WireOpened> open(const WireOptions& options, const KernelFeatures& features);
  ~WireCapture();
  WireCapture(const WireCapture&) = delete;
  WireCapture& operator=(const WireCapture&) = delete;

  bool poll(std::vector<skewscope_wire_event>& out, std::chrono::milliseconds timeout);
  static constexpr std::size_t kMaxBatch = 8192;
  WireCounters counters() const;
  std::string error() const { return error_; }
  const std::vector<WireAttachment>& attachments() const { return attachments_; }
  bool rx_timestamps_held() const { return rx_stamp_socket_ >= 0; }
  const std::string& send_path() const { return send_path_; }
  const std::string& send_path_reason() const { return send_path_reason_; }
  const std::string& variant() const { return programs_.variant(); }

 private:
  WireCapture() = default;
  static int on_record(void* ctx, void* data, std::size_t size);
  void detach_all();

  WirePrograms programs_;
  std::vector<bpf_link*> cgroup_links_;  // links: the kernel detaches them if the agent dies
  std::string send_path_;
  std::string send_path_reason_;
  ring_buffer* ring_ = nullptr;
  std::optional<CounterSlices> counters_;  // wire_counters, mapped once every object is loaded
  std::vector<skewscope_wire_event>* sink_ = nullptr;
  std::vector<WireAttachment> attachments_;
  int rx_stamp_socket_ = -1;
  std::atomic<std::uint64_t> malformed_{0};
  std::string error_;
};

// ethtool timestamping info of an interface (SIOCETHTOOL ETHTOOL_GET_TS_INFO), read in its
// namespace. An error when the interface or the ioctl is not there.
struct TsInfo {
  int phc_index = -1;                 // the NIC's PHC, -1 when none
  std::uint32_t so_timestamping = 0;  // SOF_TIMESTAMPING_* capabilities
};
Result<TsInfo> read_ts_info(const WireInterface& iface);

}  // namespace skewscope
