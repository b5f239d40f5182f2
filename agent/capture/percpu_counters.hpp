#pragma once
// The kernel side's drop and event counters are per-CPU array maps indexed by a counter enum:
// one reader sums every slot over every possible CPU, for every capture that has such a map.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace skewscope {

class PerCpuCounters {
 public:
  PerCpuCounters(int map_fd, std::uint32_t slots) : fd_(map_fd), slots_(slots) {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus > 0) cpus_ = static_cast<std::size_t>(cpus);
  }
  // False when the map or the CPU count cannot be read: every sum is then 0.
  bool usable() const { return fd_ >= 0 && cpus_ > 0; }

  // Every slot's sum, index = slot. One system call (a per-CPU array's batch holds each key's
  // value for every CPU, one after the other) where the kernel has batch operations, one per slot
  // where it has not: the readers call this on every pass, and a lookup per slot was a tenth of
  // the agent's time under ZMTP request/reply load.
  std::vector<std::uint64_t> sums() {
    std::vector<std::uint64_t> out(slots_, 0);
    if (!usable()) return out;
    keys_.assign(slots_, 0);
    values_.resize(cpus_ * slots_);
    __u32 count = slots_, out_batch = 0;
    if (bpf_map_lookup_batch(fd_, nullptr, &out_batch, keys_.data(), values_.data(), &count, nullptr) == 0 ||
        (errno == ENOENT && count == slots_)) {
      for (std::uint32_t i = 0; i < count && i < slots_; ++i) {
        if (keys_[i] >= slots_) continue;
        for (std::size_t cpu = 0; cpu < cpus_; ++cpu) out[keys_[i]] += values_[i * cpus_ + cpu];
      }
      return out;
    }
    for (std::uint32_t slot = 0; slot < slots_; ++slot) {
      if (bpf_map_lookup_elem(fd_, &slot, values_.data()) != 0) continue;
      for (std::size_t cpu = 0; cpu < cpus_; ++cpu) out[slot] += values_[cpu];
    }
    return out;
  }

 private:
  int fd_;
  std::uint32_t slots_;
  std::size_t cpus_ = 0;
  std::vector<std::uint32_t> keys_;
  std::vector<std::uint64_t> values_;
};

}  // namespace skewscope
