// What the RDMA verbs capture hands the agent core: raw ABI records plus its own counters.
// Production: rdma_capture (BPF ring buffer + uprobes). Tests: records built by hand.
#pragma once

#include <array>
#include <cstdint>

#include "skewscope/abi/rdma_event.h"

namespace skewscope {

struct RdmaSourceCounters {
  // Per-CPU kernel counters summed, indexed by enum skewscope_rdma_counter.
  std::array<std::uint64_t, SKEWSCOPE_RDMA_CNT__COUNT> kernel{};
  std::uint64_t library_probes = 0;        // probes on libibverbs files now (3 per file: (device, inode))
  std::uint64_t provider_probes = 0;       // probes on provider post_send / poll_cq, one per (device, inode, offset)
  std::uint64_t attach_failures = 0;       // a probe that could not be attached (logged)
  std::uint64_t unresolved_functions = 0;  // an address in no file mapping (process gone, JIT, ...)
  std::uint64_t detached = 0;              // probes removed because no process maps their file
  std::uint64_t malformed_records = 0;     // ring buffer records of the wrong size
  std::uint64_t local_gids = 0;            // connections whose local GID was read from the GID table
  std::uint64_t local_gid_unknown = 0;     // ... or could not be (no sysfs entry): not shippable
};

// Name of a kernel counter, for the status JSON and logs.
inline const char* rdma_counter_name(unsigned i) {
  static constexpr const char* kNames[SKEWSCOPE_RDMA_CNT__COUNT] = {
      "ringbuf_full", "emitted",           "writes",       "other_wrs",      "wr_truncated", "send_completions",
      "flushed",      "error_completions", "wc_truncated", "poll_unmatched", "untracked"};
  return i < SKEWSCOPE_RDMA_CNT__COUNT ? kNames[i] : "unknown";
}

}  // namespace skewscope
