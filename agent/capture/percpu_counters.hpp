#pragma once
// The kernel side's drop and event counters are per-CPU array maps indexed by a counter enum:
// one reader sums a slot over every possible CPU, for every capture that has such a map.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstdint>
#include <vector>

namespace skewscope {

class PerCpuCounters {
 public:
  explicit PerCpuCounters(int map_fd) : fd_(map_fd) {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus > 0) values_.resize(static_cast<std::size_t>(cpus));
  }
  // False when the map or the CPU count cannot be read: every sum is then 0.
  bool usable() const { return fd_ >= 0 && !values_.empty(); }
  std::uint64_t sum(std::uint32_t slot) {
    if (!usable() || bpf_map_lookup_elem(fd_, &slot, values_.data()) != 0) return 0;
    std::uint64_t total = 0;
    for (auto v : values_) total += v;
    return total;
  }

 private:
  int fd_;
  std::vector<std::uint64_t> values_;
};

}  // namespace skewscope
