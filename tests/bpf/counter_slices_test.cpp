// The agent's reader of the kernel side's counters (capture/counter_slices.hpp) against real BPF
// maps: an mmapable array of a slice per CPU is summed per counter, slice by slice; a map of
// another kind or size is refused with a reason, never read as counters.
//
// Needs root (creating BPF maps): otherwise the binary says why and exits 77, which CTest reports
// as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "capture/counter_slices.hpp"

namespace {

using skewscope::CounterSlices;

constexpr int kSkipped = 77;
constexpr std::uint32_t kSlots = 5;  // stride 8: three unused counters per slice

// An owned map fd.
struct MapFd {
  int fd = -1;
  explicit MapFd(int f) : fd(f) {}
  ~MapFd() {
    if (fd >= 0) ::close(fd);
  }
};

int create(bpf_map_type type, std::uint32_t entries, std::uint32_t flags) {
  LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
  return bpf_map_create(type, "test_counters", sizeof(std::uint32_t), sizeof(std::uint64_t), entries, &opts);
}

std::size_t cpus() { return static_cast<std::size_t>(libbpf_num_possible_cpus()); }

}  // namespace

TEST_CASE("counter slices: each counter is summed over the CPUs' slices, and only the counters") {
  const std::uint32_t stride = CounterSlices::stride(kSlots);
  CHECK(stride == 8);
  MapFd map(create(BPF_MAP_TYPE_ARRAY, static_cast<std::uint32_t>(cpus()) * stride, BPF_F_MMAPABLE));
  REQUIRE(map.fd >= 0);
  // Counter i of CPU c holds (c + 1) * 10 + i; the slots past the counters hold what a slice's
  // padding must never contribute.
  for (std::uint32_t cpu = 0; cpu < cpus(); ++cpu) {
    for (std::uint32_t i = 0; i < stride; ++i) {
      const std::uint32_t key = cpu * stride + i;
      const std::uint64_t value = i < kSlots ? (cpu + 1) * 10 + i : 1'000'000;
      REQUIRE(bpf_map_update_elem(map.fd, &key, &value, BPF_ANY) == 0);
    }
  }
  auto slices = CounterSlices::map(map.fd, kSlots);
  REQUIRE_MESSAGE(slices, slices.error);
  const auto sums = slices->sums();
  REQUIRE(sums.size() == kSlots);
  const std::uint64_t n = cpus();
  for (std::uint32_t i = 0; i < kSlots; ++i) CHECK(sums[i] == 10 * n * (n + 1) / 2 + n * i);
  // Read from memory: a later write shows at the next sum without mapping again.
  const std::uint32_t key = 0 * stride + 3;
  const std::uint64_t more = 500;
  REQUIRE(bpf_map_update_elem(map.fd, &key, &more, BPF_ANY) == 0);
  CHECK(slices->sums()[3] == 10 * n * (n + 1) / 2 + n * 3 - 13 + 500);
  // Moved, the mapping stays with the new owner.
  CounterSlices moved = std::move(*slices);
  CHECK(moved.sums()[3] == 10 * n * (n + 1) / 2 + n * 3 - 13 + 500);
}

TEST_CASE("counter slices: a map that is not a slice per CPU is refused with a reason") {
  const std::uint32_t stride = CounterSlices::stride(kSlots);
  const auto entries = static_cast<std::uint32_t>(cpus()) * stride;
  SUBCASE("a per-CPU array (the old layout)") {
    MapFd map(create(BPF_MAP_TYPE_PERCPU_ARRAY, kSlots, 0));
    REQUIRE(map.fd >= 0);
    auto slices = CounterSlices::map(map.fd, kSlots);
    REQUIRE_FALSE(slices);
    CHECK(slices.error.find("not an mmapable array") != std::string::npos);
  }
  SUBCASE("an array that cannot be mapped") {
    MapFd map(create(BPF_MAP_TYPE_ARRAY, entries, 0));
    REQUIRE(map.fd >= 0);
    CHECK_FALSE(CounterSlices::map(map.fd, kSlots));
  }
  SUBCASE("one slice short") {
    MapFd map(create(BPF_MAP_TYPE_ARRAY, entries - stride, BPF_F_MMAPABLE));
    REQUIRE(map.fd >= 0);
    CHECK_FALSE(CounterSlices::map(map.fd, kSlots));
  }
  SUBCASE("not a map") {
    auto slices = CounterSlices::map(-1, kSlots);
    REQUIRE_FALSE(slices);
    CHECK(slices.error.find("reading the counters map") != std::string::npos);
  }
}

int main(int argc, char** argv) {
  if (::geteuid() != 0) {
    std::cout << "SKIP: creating BPF maps needs root\n";
    return kSkipped;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
