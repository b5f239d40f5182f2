// The kernel side's drop and event counters (bpf/lib/counter_slices.bpf.h): an array with a slice
// of counters per CPU, mapped into this process once and summed with plain loads. The readers sum
// them at every pass of their ring's loop (50 a second when idle); a per-CPU array there cost a
// system call per pass, 15-20 us on the test VM, a third of an idle agent's CPU time.
#pragma once

#include <bpf/libbpf.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope {

class CounterSlices {
 public:
  // Counters per CPU slice, whole cache lines (as SKEWSCOPE_COUNTER_STRIDE).
  static constexpr std::uint32_t stride(std::uint32_t slots) { return (slots + 7) / 8 * 8; }
  // Before the object loads: a slice for every possible CPU.
  static Status size_map(bpf_map* map, std::uint32_t slots);
  // The loaded map, mapped read-only; fails when it is not an mmapable array of a slice per
  // possible CPU (an object built from other sources).
  static Result<CounterSlices> map(int map_fd, std::uint32_t slots);

  CounterSlices(CounterSlices&& o) noexcept;
  CounterSlices& operator=(CounterSlices&& o) noexcept;
  CounterSlices(const CounterSlices&) = delete;
  CounterSlices& operator=(const CounterSlices&) = delete;
  ~CounterSlices();

  // Every counter's sum over the CPUs, index = counter.
  std::vector<std::uint64_t> sums() const;

 private:
  CounterSlices(const std::uint64_t* base, std::size_t bytes, std::uint32_t slots, std::size_t cpus)
      : base_(base), bytes_(bytes), slots_(slots), cpus_(cpus) {}
  void unmap();

  const std::uint64_t* base_ = nullptr;
  std::size_t bytes_ = 0;  // of the mapping
  std::uint32_t slots_ = 0;
  std::size_t cpus_ = 0;
};

}  // namespace skewscope
