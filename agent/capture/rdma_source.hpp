// What the RDMA verbs capture hands the agent core: raw ABI records plus its own counters.
// Production: rdma_capture (BPF ring buffer + uprobes). Tests: records built by hand.
#pragma once

#include <array>
#include <cstdint>

#include "skewscope/abi/rdma_event.h"

namespace skewscope {

// Which stamp each half carries (docs/rdma.md, Time), and the NIC clock samples behind them.
struct RdmaStampCounters {
  std::uint64_t probe = 0;           // sends, and receives of plain CQs: the probe's time
  std::uint64_t nic_completion = 0;  // receives stamped with read_completion_ts, mapped
  std::uint64_t nic_wallclock = 0;   // receives stamped with read_completion_wallclock_ns, mapped
  std::uint64_t no_clock = 0;        // fell back to the probe: too few samples of the NIC clock
  std::uint64_t implausible = 0;     // fell back: mapped outside the window the completion can be in
  std::uint64_t not_read = 0;        // fell back: the CQ offers a stamp the application did not read
  std::uint64_t clock_samples = 0;   // query_rt_values samples kept
  std::uint64_t clock_samples_rejected = 0;
  std::uint64_t clocks = 0;          // NIC clocks (process, context) with samples now, of live processes
  std::uint64_t clocks_evicted = 0;  // ... forgotten at the bound (their halves fall back: no_clock)
};

struct RdmaSourceCounters {
  // Per-CPU kernel counters summed, indexed by enum skewscope_rdma_counter.
  std::array<std::uint64_t, SKEWSCOPE_RDMA_CNT__COUNT> kernel{};
  std::uint64_t library_probes = 0;        // probes on libibverbs files now (3 per file: (device, inode))
  std::uint64_t provider_probes = 0;       // probes on provider post_send / poll_cq, one per (device, inode, offset)
  std::uint64_t extended_probes = 0;       // ... on its create_cq_ex, query_rt_values and extended CQs' functions
  std::uint64_t attach_failures = 0;       // a probe that could not be attached (logged)
  std::uint64_t unresolved_functions = 0;  // an address in no file mapping (process gone, JIT, ...)
  std::uint64_t detached = 0;              // probes removed because no process maps their file
  std::uint64_t malformed_records = 0;     // ring buffer records of the wrong size
  std::uint64_t local_gids = 0;            // connections whose local GID was read from the GID table
  std::uint64_t local_gid_unknown = 0;     // ... or could not be (no sysfs entry): not shippable
  std::uint64_t extended_cqs = 0;          // ibv_create_cq_ex results seen (their functions get probed)
  RdmaStampCounters stamps;
};

// Name of a kernel counter, for the status JSON and logs.
inline const char* rdma_counter_name(unsigned i) {
  static constexpr const char* kNames[SKEWSCOPE_RDMA_CNT__COUNT] = {
      "ringbuf_full",    "emitted",           "writes",       "other_wrs",      "wr_truncated", "send_completions",
      "flushed",         "error_completions", "wc_truncated", "poll_unmatched", "untracked",    "ex_completions",
      "ex_unclassified", "ex_nested"};
  return i < SKEWSCOPE_RDMA_CNT__COUNT ? kNames[i] : "unknown";
}

}  // namespace skewscope
