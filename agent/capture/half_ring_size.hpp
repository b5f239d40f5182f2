#pragma once
// How big each CPU's half ring buffer is (bpf/lib/tcp_halves.bpf.h: one ring per CPU). Pure, so
// the rule is tested without BPF.
#include <algorithm>
#include <cstdint>

namespace skewscope {

inline constexpr std::uint32_t kHalfRingBytesTotal = 8u << 20;
inline constexpr std::uint32_t kHalfRingBytesMinPerCpu = 1u << 20;

// The 8 MiB a single ring had, shared out, but never under 1 MiB per CPU: a quarter of a ring
// (where the reader is woken) must hold more than a busy CPU emits between two polls (20 ms).
// Ring buffers are a power of 2 in size: the share is rounded up to one.
constexpr std::uint32_t half_ring_bytes_per_cpu(unsigned cpus) {
  const std::uint32_t share = kHalfRingBytesTotal / std::max(1u, cpus);
  std::uint32_t bytes = kHalfRingBytesMinPerCpu;
  while (bytes < share && bytes < kHalfRingBytesTotal) bytes *= 2;
  return bytes;
}

}  // namespace skewscope
