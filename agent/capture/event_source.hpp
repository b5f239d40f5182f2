// What the agent core consumes: raw ABI halves plus the source's own drop counters.
// Production: the BPF ring buffer. Tests: a synthetic source.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "skewscope/abi/half_event.h"

namespace skewscope {

// Halves lost in the kernel, by where they came from (the half itself never reached the agent).
struct LossOrigin {
  std::uint32_t netns_ino = 0;
  std::uint64_t cgroup_id = 0;
  bool ring_buffer_full = false;  // else: the in-flight table was full
  std::uint64_t count = 0;
};

struct SourceCounters {
  std::uint64_t emitted = 0;               // halves the source produced
  std::uint64_t ringbuf_full = 0;          // lost before the agent could read them
  std::uint64_t inflight_full = 0;         // syscall entries that could not be remembered until exit
  std::uint64_t mmsg_truncated = 0;        // *mmsg calls with more messages than the kernel side reads
  std::uint64_t send_cut_short = 0;        // sends emitted at their start that then moved fewer bytes
  std::uint64_t send_slot_fallbacks = 0;   // sends kept in task-local storage: no send-table slot free
  std::uint64_t malformed_records = 0;     // ring buffer records of the wrong size (never decoded)
  std::vector<LossOrigin> lost_by_origin;  // ringbuf_full + inflight_full, where attributable
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  // Appends what is available, waiting at most `timeout` for the first event.
  // Returns false when the source has ended (synthetic sources) or failed.
  virtual bool poll(std::vector<skewscope_half_event>& out, std::chrono::milliseconds timeout) = 0;
  // Safe to call from any thread.
  virtual SourceCounters counters() const = 0;
  // After poll returned false: why, for the log and the status.
  virtual std::string error() const { return "the event source ended"; }
  // Before a long wait (agent/runtime/ring_drain.hpp, "idle"): asks the kernel side to wake the
  // next poll at its next record. False when it cannot; the loop then keeps its busy pace.
  virtual bool arm_idle_wakeup() { return false; }
};

}  // namespace skewscope
