#include "capture/counter_slices.hpp"

#include <bpf/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace skewscope {

namespace {

Result<std::size_t> possible_cpus() {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return Result<std::size_t>::fail("counting the possible CPUs: " + std::string(std::strerror(-cpus)));
  return Result<std::size_t>::ok(static_cast<std::size_t>(cpus));
}

}  // namespace

Status CounterSlices::size_map(bpf_map* map, std::uint32_t slots) {
  const auto cpus = possible_cpus();
  if (!cpus) return Status::fail(cpus.error);
  if (int err = bpf_map__set_max_entries(map, static_cast<std::uint32_t>(*cpus * stride(slots)))) {
    return Status::fail("sizing the counters map " + std::string(bpf_map__name(map)) + ": " + std::strerror(-err));
  }
  return Status::ok();
}

Result<CounterSlices> CounterSlices::map(int map_fd, std::uint32_t slots) {
  using Mapped = Result<CounterSlices>;
  const auto cpus = possible_cpus();
  if (!cpus) return Mapped::fail(cpus.error);
  bpf_map_info info{};
  __u32 info_len = sizeof info;
  if (bpf_obj_get_info_by_fd(map_fd, &info, &info_len) != 0) {
    return Mapped::fail("reading the counters map's description: " + std::string(std::strerror(errno)));
  }
  const std::size_t entries = *cpus * stride(slots);
  if (info.type != BPF_MAP_TYPE_ARRAY || !(info.map_flags & BPF_F_MMAPABLE) ||
      info.value_size != sizeof(std::uint64_t) || info.max_entries != entries) {
    return Mapped::fail("the counters map " + std::string(info.name) + " is not an mmapable array of " +
                        std::to_string(entries) + " 64-bit counters (a slice per possible CPU)");
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = (entries * sizeof(std::uint64_t) + page - 1) / page * page;
  void* at = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, map_fd, 0);
  if (at == MAP_FAILED) return Mapped::fail("mapping the counters map: " + std::string(std::strerror(errno)));
  return Mapped::ok(CounterSlices(static_cast<const std::uint64_t*>(at), bytes, slots, *cpus));
}

CounterSlices::CounterSlices(CounterSlices&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), bytes_(o.bytes_), slots_(o.slots_), cpus_(o.cpus_) {}

CounterSlices& CounterSlices::operator=(CounterSlices&& o) noexcept {
  if (this != &o) {
    unmap();
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = o.bytes_;
    slots_ = o.slots_;
    cpus_ = o.cpus_;
  }
  return *this;
}

CounterSlices::~CounterSlices() { unmap(); }

void CounterSlices::unmap() {
  if (base_) munmap(const_cast<std::uint64_t*>(base_), bytes_);
  base_ = nullptr;
}

std::vector<std::uint64_t> CounterSlices::sums() const {
  std::vector<std::uint64_t> out(slots_, 0);
  if (!base_) return out;
  const std::uint32_t step = stride(slots_);
  for (std::size_t cpu = 0; cpu < cpus_; ++cpu) {
    const std::uint64_t* slice = base_ + cpu * step;
    // Written by the programs on that CPU while this reads: whole 64-bit loads, never torn.
    for (std::uint32_t i = 0; i < slots_; ++i) out[i] += __atomic_load_n(&slice[i], __ATOMIC_RELAXED);
  }
  return out;
}

}  // namespace skewscope
