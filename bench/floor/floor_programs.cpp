// Loads and attaches one set of the floor programs (bpf/hook_floor.bpf.c) until SIGTERM or SIGINT, and in
// `stamp` mode reads their ring every 20 ms as the agent does (no wake-ups), so that the records
// are consumed, never lost, and the reader's CPU can be measured like the agent's.
//
//   floor_programs empty|stamp
//
// Prints "floor: attached N programs (MODE)" once every program is attached, and at the end
// "floor: R records read, D lost" (lost: the ring was full, which a polling reader at these rates
// should never see). Exit 0; 1 when a program cannot be loaded or attached; 2 on a usage error.
#include <bpf/libbpf.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hook_floor.skel.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop = true; }

// RAII around the skeleton and the ring reader.
struct Floor {
  hook_floor* skel = nullptr;
  ring_buffer* ring = nullptr;
  ~Floor() {
    ring_buffer__free(ring);
    hook_floor__destroy(skel);
  }
};

int count_record(void* ctx, void*, std::size_t) {
  ++*static_cast<std::uint64_t*>(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 2 ? argv[1] : "";
  if (mode != "empty" && mode != "stamp") {
    std::fprintf(stderr, "usage: floor_programs empty|stamp\n");
    return 2;
  }
  Floor f;
  f.skel = hook_floor__open();
  if (!f.skel) {
    std::fprintf(stderr, "floor: cannot open the BPF object: %s\n", std::strerror(errno));
    return 1;
  }
  const bool empty = mode == "empty";
  std::vector<bpf_program*> chosen =
      empty ? std::vector<bpf_program*>{f.skel->progs.empty_send_begin, f.skel->progs.empty_send_end,
                                        f.skel->progs.empty_recv_end}
            : std::vector<bpf_program*>{f.skel->progs.stamp_send_end, f.skel->progs.stamp_recv_end};
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, f.skel->obj) bpf_program__set_autoload(prog, false);
  for (bpf_program* p : chosen) bpf_program__set_autoload(p, true);
  if (int err = hook_floor__load(f.skel)) {
    std::fprintf(stderr, "floor: cannot load the programs: %s\n", std::strerror(-err));
    return 1;
  }
  std::vector<bpf_link*> links;
  for (bpf_program* p : chosen) {
    bpf_link* link = bpf_program__attach(p);
    if (!link) {
      std::fprintf(stderr, "floor: cannot attach %s: %s\n", bpf_program__name(p), std::strerror(errno));
      for (bpf_link* l : links) bpf_link__destroy(l);
      return 1;
    }
    links.push_back(link);
  }
  std::uint64_t records = 0;
  if (!empty) {
    f.ring = ring_buffer__new(bpf_map__fd(f.skel->maps.records), count_record, &records, nullptr);
    if (!f.ring) {
      std::fprintf(stderr, "floor: cannot read the ring buffer: %s\n", std::strerror(errno));
      for (bpf_link* l : links) bpf_link__destroy(l);
      return 1;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::printf("floor: attached %zu programs (%s)\n", links.size(), mode.c_str());
  std::fflush(stdout);
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (f.ring) ring_buffer__consume(f.ring);
  }
  for (bpf_link* l : links) bpf_link__destroy(l);
  if (f.ring) ring_buffer__consume(f.ring);
  std::printf("floor: %llu records read, %llu lost\n", static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(f.skel->bss->lost));
  return 0;
}
