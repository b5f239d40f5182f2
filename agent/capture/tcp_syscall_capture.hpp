// The production EventSource: the tcp_syscalls BPF object (every TCP capture variant), opened,
// configured, loaded and attached in one RAII object; destroying it detaches everything.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "capture/counter_slices.hpp"
#include "capture/event_source.hpp"
#include "capture/features.hpp"
#include "capture/payload_settings.hpp"
#include "capture/ring_wait.hpp"
#include "capture/send_slots.hpp"
#include "skewscope/result.hpp"

struct tcp_syscalls;  // generated skeleton
struct ring_buffer;
struct bpf_link;

namespace skewscope {

class TcpSyscallCapture final : public EventSource {
 public:
  using Opened = Result<std::unique_ptr<TcpSyscallCapture>>;
  // Loads and attaches the variant the candidate table prefers among those this kernel loads: each
  // chosen variant is loaded; one the kernel refuses is passed over for the next (refused() says
  // why), and the first that loads is attached. The agent's own process is excluded.
  // `payload`: the payload capture's settings (max_bytes 0: off, see bpf/lib/payload_capture.bpf.h).
  // When none loads, the error says whether any was refused at load (else the kernel lacks what
  // each needs) and why.
  struct NoVariant {
    FamilyReason reason = FamilyReason::kernel_lacks_feature;
    std::string message;
  };
  // `send_slots`: the sock_tp send table's size (capture/send_slots.hpp), a power of two.
  static Result<std::unique_ptr<TcpSyscallCapture>, NoVariant> open_best(const KernelFeatures& features,
                                                                         const PayloadSettings& payload = {},
                                                                         std::uint32_t send_slots = kSendSlotsDefault);
  ~TcpSyscallCapture() override;
  TcpSyscallCapture(const TcpSyscallCapture&) = delete;
  TcpSyscallCapture& operator=(const TcpSyscallCapture&) = delete;

  // Records are submitted without waking the reader (see bpf/lib/tcp_halves.bpf.h), so poll waits
  // for `timeout` (or a wake-up when the ring fills) and then consumes whatever is there, at most
  // kMaxBatch records: the caller's vector stays bounded however far behind it is.
  bool poll(std::vector<skewscope_half_event>& out, std::chrono::milliseconds timeout) override;
  static constexpr std::size_t kMaxBatch = 8192;
  SourceCounters counters() const override;
  std::string error() const override { return error_; }
  // The next half wakes the reader (halves_reader_idle, bpf/lib/tcp_halves.bpf.h).
  bool arm_idle_wakeup() override { return idle_flag_.arm(); }
  // Ends a poll's wait at once, and every later one (the agent is stopping). From any thread.
  void interrupt_wait() { wait_->interrupt(); }

  const std::vector<std::string>& attached() const { return attached_; }
  // The payload ring buffer and its counters (read by capture/payload_reader.hpp).
  int payload_ring_fd() const;
  int payload_counters_fd() const;
  // The payload loop's idle flag (payload_reader_idle, bpf/lib/payload_capture.bpf.h), in the
  // object's mapped `.data.wake`: valid while this object lives.
  std::uint32_t* payload_idle_flag() const;
  // The variant of the loaded entry programs: "raw_tp", "btf" or "core_read" (see features.hpp).
  const std::string& variant() const { return variant_; }
  // Variants preferred to this one that the kernel refused at load (open_best), with its reason.
  const RejectedVariants& refused() const { return refused_; }

 private:
  TcpSyscallCapture() = default;
  // Opens the object, switches on the chosen programs only (every other program stays unloaded,
  // so one the kernel would refuse cannot fail the load), loads it and creates the rings.
  static Opened load(const std::vector<HookChoice>& choices, const PayloadSettings& payload, std::uint32_t send_slots);
  Status attach(const std::vector<HookChoice>& choices);
  static int on_record(void* ctx, void* data, std::size_t size);
  // One ring buffer per CPU (see bpf/lib/tcp_halves.bpf.h, capture/half_ring_size.hpp): created,
  // placed in halves_by_cpu and registered with the reader. One reader consumes them in CPU
  // order; under a backlog a pass that fills kMaxBatch stops there and the next starts at CPU 0
  // again, which only matters when the CPUs together emit faster than the agent reads (then
  // losses are counted either way).
  Status create_rings(unsigned cpus, std::uint32_t bytes);
  // Sums of the kernel side's counters over the CPUs, by slot (enum skewscope_bpf_counter).
  std::array<std::uint64_t, SKEWSCOPE_CNT__COUNT> read_counter_slots() const;
  void read_origins() const;  // fills origins_ from the lost_by_origin map

  tcp_syscalls* skel_ = nullptr;
  std::optional<CounterSlices> counter_slices_;  // the `counters` map, mapped once loaded
  ring_buffer* ring_ = nullptr;                  // reads every CPU's ring
  std::optional<RingWait> wait_;                 // on ring_'s epoll set, made with the rings
  ReaderIdleFlag idle_flag_;                     // halves_reader_idle, once loaded
  std::vector<int> ring_fds_;
  std::vector<skewscope_half_event>* sink_ = nullptr;
  std::vector<bpf_link*> links_;  // attached by us (only chosen programs), destroyed before the skeleton
  std::vector<std::string> attached_;
  std::string variant_;
  RejectedVariants refused_;
  // Records of the wrong size: counted, never decoded. Written by the polling thread, read by
  // counters() from any thread.
  std::atomic<std::uint64_t> malformed_{0};
  std::string error_;  // why poll failed; written and read by the polling thread only
  // counters() runs on every capture pass (50 a second when idle): what it can reuse between
  // calls, behind its own lock because it may be called from any thread (the counters themselves
  // are read from memory, counter_slices_).
  mutable std::mutex counters_mutex_;
  mutable std::vector<LossOrigin> origins_;  // lost_by_origin as last read
  mutable std::uint64_t losses_seen_ = 0;    // ringbuf_full + inflight_full, last call
  mutable bool moved_before_ = false;        // ... and whether it had moved then
  mutable std::chrono::steady_clock::time_point origins_read_at_{};
};

}  // namespace skewscope
