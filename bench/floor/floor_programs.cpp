// Loads and attaches one set of the floor programs (bpf/hook_floor.bpf.c) until SIGTERM or SIGINT.
// The stamping sets' records are read every 20 ms as the agent reads its rings (no wake-ups), so
// that they are consumed, never lost, and the reader's CPU can be measured like the agent's.
//
//   floor_programs empty|stamp|shared|copy
//
// stamp: a ring buffer per CPU (as the agent has); shared: one ring buffer for every CPU; copy:
// as stamp, each send's record also holding the first bytes the send's syscall named.
// Prints "floor: attached N programs (MODE)" once every program is attached, and at the end
// "floor: R records read, C with a copy, D lost" (C: copy records holding bytes of their send;
// lost: a ring was full, which a polling reader at these rates should never see).
// Exit 0; 1 when a program cannot be loaded or attached; 2 on a usage error.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "capture/half_ring_size.hpp"
#include "hook_floor.skel.h"
#include "skewscope/abi/half_event.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

// RAII around the skeleton, the per-CPU rings, the links and the reader.
struct Floor {
  hook_floor* skel = nullptr;
  std::vector<int> ring_fds;
  std::vector<bpf_link*> links;
  ring_buffer* reader = nullptr;
  ~Floor() {
    ring_buffer__free(reader);
    for (bpf_link* l : links) bpf_link__destroy(l);
    for (int fd : ring_fds) close(fd);
    hook_floor__destroy(skel);
  }
};

struct Counts {
  std::uint64_t records = 0;
  std::uint64_t copied = 0;  // copy records that hold bytes of their send
};

// The copy floor's send record: a half's 80 bytes (ts_ns first, the copied length in `bytes`),
// then the bytes (hook_floor.bpf.c, copy_record).
constexpr std::size_t kCopyRecordSize = sizeof(skewscope_half_event) + 64;

int count_record(void* ctx, void* data, std::size_t size) {
  auto* counts = static_cast<Counts*>(ctx);
  ++counts->records;
  if (size == kCopyRecordSize && static_cast<const skewscope_half_event*>(data)->bytes > 0) ++counts->copied;
  return 0;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "floor: %s: %s\n", what.c_str(), std::strerror(errno));
  return 1;
}

// Adds a ring's fd to the reader (creating it with the first).
bool read_ring(Floor& f, int fd, Counts* counts) {
  if (!f.reader) {
    f.reader = ring_buffer__new(fd, count_record, counts, nullptr);
    return f.reader != nullptr;
  }
  return ring_buffer__add(f.reader, fd, count_record, counts) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 2 ? argv[1] : "";
  if (mode != "empty" && mode != "stamp" && mode != "shared" && mode != "copy") {
    std::fprintf(stderr, "usage: floor_programs empty|stamp|shared|copy\n");
    return 2;
  }
  Floor f;
  f.skel = hook_floor__open();
  if (!f.skel) return fail("opening the BPF object");
  auto& p = f.skel->progs;
  const std::vector<bpf_program*> chosen =
      mode == "empty"   ? std::vector<bpf_program*>{p.empty_send_begin, p.empty_send_end, p.empty_recv_end}
      : mode == "stamp" ? std::vector<bpf_program*>{p.stamp_send_end, p.stamp_recv_end}
      : mode == "copy"  ? std::vector<bpf_program*>{p.copy_send_end, p.stamp_recv_end}
                        : std::vector<bpf_program*>{p.shared_send_end, p.shared_recv_end};
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, f.skel->obj) bpf_program__set_autoload(prog, false);
  for (bpf_program* c : chosen) bpf_program__set_autoload(c, true);
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return fail("counting the possible CPUs");
  bpf_map__set_max_entries(f.skel->maps.rings_by_cpu, static_cast<__u32>(cpus));
  // The agent's ring sizes: the ring's memory (how much of it stays in cache) is part of the cost.
  const std::uint32_t ring_bytes = skewscope::half_ring_bytes_per_cpu(static_cast<unsigned>(cpus));
  bpf_map__set_max_entries(f.skel->maps.shared_ring, skewscope::kHalfRingBytesTotal);
  if (int err = hook_floor__load(f.skel)) {
    errno = -err;
    return fail("loading the programs");
  }
  Counts counts;
  if (mode == "stamp" || mode == "copy") {
    const int outer = bpf_map__fd(f.skel->maps.rings_by_cpu);
    for (int cpu = 0; cpu < cpus; ++cpu) {
      const int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "floor_cpu", 0, 0, ring_bytes, nullptr);
      if (fd < 0) return fail("creating the ring buffer of CPU " + std::to_string(cpu));
      f.ring_fds.push_back(fd);
      const __u32 key = static_cast<__u32>(cpu);
      if (bpf_map_update_elem(outer, &key, &fd, BPF_ANY) != 0)
        return fail("placing the ring buffer of CPU " + std::to_string(cpu));
      if (!read_ring(f, fd, &counts)) return fail("reading the ring buffer of CPU " + std::to_string(cpu));
    }
  } else if (mode == "shared" && !read_ring(f, bpf_map__fd(f.skel->maps.shared_ring), &counts)) {
    return fail("reading the shared ring buffer");
  }
  for (bpf_program* c : chosen) {
    bpf_link* link = bpf_program__attach(c);
    if (!link) return fail(std::string("attaching ") + bpf_program__name(c));
    f.links.push_back(link);
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::printf("floor: attached %zu programs (%s)\n", f.links.size(), mode.c_str());
  std::fflush(stdout);
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (f.reader) ring_buffer__consume(f.reader);
  }
  for (bpf_link* l : f.links) bpf_link__destroy(l);
  f.links.clear();
  if (f.reader) ring_buffer__consume(f.reader);
  std::printf("floor: %llu records read, %llu with a copy, %llu lost\n",
              static_cast<unsigned long long>(counts.records), static_cast<unsigned long long>(counts.copied),
              static_cast<unsigned long long>(f.skel->bss->lost));
  return 0;
}
