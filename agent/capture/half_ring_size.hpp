#pragma once
// How big each CPU's half ring buffer is (bpf/lib/tcp_halves.bpf.h: one ring per CPU). Pure, so
// the rule is tested without BPF.
#include <algorithm>
#include <cstdint>

namespace skewscope {

inline constexpr std::uint32_t kHalfRingBytesTotal = 8u << 20;
inline constexpr std::uint32_t kHalfRingBytesMinPerCpu = 1u << 20;

// The 8 MiB a single ring had, shared out, but never under 1 MiB per CPU: a quarter of a ring
// (the reader is woken before that much is waiting) must hold more than a busy CPU emits between
// two polls (20 ms).
// Ring buffers are a power of 2 in size: the share is rounded up to one.
constexpr std::uint32_t half_ring_bytes_per_cpu(unsigned cpus) {
  const std::uint32_t share = kHalfRingBytesTotal / std::max(1u, cpus);
  std::uint32_t bytes = kHalfRingBytesMinPerCpu;
  while (bytes < share && bytes < kHalfRingBytesTotal) bytes *= 2;
  return bytes;
}

// The reader is woken once every (mask + 1) halves a CPU emits, a power of 2 so that the kernel
// side tests it with one AND on the per-CPU count it keeps anyway: the largest such count whose
// records (each with the ring's 8-byte header) fill no more than a quarter of the ring. Asking
// the ring how full it is cost a helper call on every half; the agent polls every 20 ms anyway,
// so the wake-up is only for a burst that would otherwise fill the ring between two polls.
constexpr std::uint64_t half_ring_wakeup_mask(std::uint32_t ring_bytes, std::uint32_t record_bytes) {
  const std::uint64_t per_quarter = ring_bytes / 4 / (std::uint64_t{record_bytes} + 8);
  std::uint64_t every = 1;
  while (every * 2 <= per_quarter) every *= 2;
  return every - 1;
}

}  // namespace skewscope
