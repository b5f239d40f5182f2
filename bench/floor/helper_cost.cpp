// What one helper call costs a BPF program on this machine (README.md, "Helper costs"): each
// program of bpf/helper_cost.bpf.c in turn, attached at sys_enter and filtered to this loader's
// own write(2)s of 20 bytes to /dev/null, its run time from the kernel's BPF statistics
// (BPF_ENABLE_STATS, for as long as this process holds the descriptor), alternated over rounds.
//
//   helper_cost [--rounds R] [--writes N]      (defaults 7 and 200000; N at most 12 201 611)
//
// Prints, per program, the median over rounds of its mean ns per run and of that less hc_empty's
// in the same round (the helper's own cost), then the same machine's clock_gettime from user
// space for comparison. Every run of a program counts, the other tasks' syscalls too (they leave
// at the filter): their share is printed ("other runs"). Exit 0; 1 when a program cannot be
// loaded or attached, or the statistics cannot be enabled; 2 on a usage error.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "helper_cost.skel.h"

namespace {

struct Measured {
  double ns_per_run = 0;
  std::uint64_t other_runs = 0;  // runs that were not this loader's writes
};

// RAII around one program's skeleton and link.
struct OneProgram {
  helper_cost* skel = nullptr;
  bpf_link* link = nullptr;
  ~OneProgram() {
    bpf_link__destroy(link);
    helper_cost__destroy(skel);
  }
};

bpf_program* program_named(helper_cost* skel, const std::string& name) {
  bpf_program* p = nullptr;
  bpf_object__for_each_program(p, skel->obj) if (name == bpf_program__name(p)) return p;
  return nullptr;
}

// Loads `name` alone, makes `writes` writes of `buffer` to `fd`, and reads the program's stats.
std::optional<Measured> measure(const std::string& name, int fd, const char* buffer, long writes) {
  OneProgram one;
  one.skel = helper_cost__open();
  if (!one.skel) return std::nullopt;
  one.skel->rodata->target_tid = static_cast<__u32>(syscall(SYS_gettid));
  one.skel->rodata->write_nr = SYS_write;
  one.skel->rodata->user_buffer = reinterpret_cast<__u64>(buffer);
  // Room for every record hc_ring submits (80 bytes and the ring's 8-byte header each): nothing
  // reads them while the writes run.
  std::uint64_t ring_bytes = 4096;
  while (ring_bytes < static_cast<std::uint64_t>(writes) * 88) ring_bytes *= 2;
  if (bpf_map__set_max_entries(one.skel->maps.records, static_cast<__u32>(ring_bytes))) return std::nullopt;
  bpf_program* chosen = program_named(one.skel, name);
  if (!chosen) return std::nullopt;
  bpf_program* p = nullptr;
  bpf_object__for_each_program(p, one.skel->obj) bpf_program__set_autoload(p, p == chosen);
  if (helper_cost__load(one.skel)) return std::nullopt;
  one.link = bpf_program__attach(chosen);
  if (!one.link) return std::nullopt;
  for (long i = 0; i < writes; ++i) {
    if (write(fd, buffer, 20) != 20) return std::nullopt;
  }
  bpf_prog_info info{};
  __u32 size = sizeof info;
  if (bpf_obj_get_info_by_fd(bpf_program__fd(chosen), &info, &size) || info.run_cnt == 0) return std::nullopt;
  if (one.skel->bss->ring_lost) {
    std::fprintf(stderr, "helper_cost: %s lost %llu ring records\n", name.c_str(),
                 static_cast<unsigned long long>(one.skel->bss->ring_lost));
    return std::nullopt;
  }
  const auto runs = static_cast<std::uint64_t>(info.run_cnt);
  return Measured{static_cast<double>(info.run_time_ns) / static_cast<double>(runs),
                  runs > static_cast<std::uint64_t>(writes) ? runs - static_cast<std::uint64_t>(writes) : 0};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double user_clock_ns() {
  constexpr int kCalls = 1'000'000;
  timespec t{};
  const auto start = std::chrono::steady_clock::now();
  [[maybe_unused]] volatile long last = 0;  // a use of every reading: the loop is kept
  for (int i = 0; i < kCalls; ++i) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    last = t.tv_nsec;
  }
  const auto took = std::chrono::steady_clock::now() - start;
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()) / kCalls;
}

bool parse_count(const char* text, long& out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno || !end || *end || v <= 0) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // hc_ring's ring holds every record of a program's writes: at most 1 GiB.
  constexpr long kMaxWrites = (1L << 30) / 88;
  long rounds = 7, writes = 200'000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--rounds" || a == "--writes") && i + 1 < argc &&
        parse_count(argv[i + 1], a == "--rounds" ? rounds : writes) && writes <= kMaxWrites) {
      ++i;
      continue;
    }
    std::fprintf(stderr, "usage: helper_cost [--rounds R] [--writes N] (R > 0, 0 < N <= %ld)\n", kMaxWrites);
    return 2;
  }
  const int stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats < 0) {
    std::fprintf(stderr, "helper_cost: enabling BPF run-time statistics: %s\n", std::strerror(-stats));
    return 1;
  }
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    std::perror("helper_cost: /dev/null");
    return 1;
  }
  static char buffer[64] = "skewscope helper cost";
  const std::vector<std::string> names = {"hc_empty", "hc_clock", "hc_user_read", "hc_kernel_read", "hc_ring"};
  std::vector<std::vector<double>> per_run(names.size()), added(names.size());
  std::uint64_t other_runs = 0, all_runs = 0;
  for (long r = 0; r < rounds; ++r) {
    std::vector<double> round(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto m = measure(names[i], fd, buffer, writes);
      if (!m) {
        std::fprintf(stderr, "helper_cost: %s: cannot be loaded, attached or measured (%s)\n", names[i].c_str(),
                     std::strerror(errno));
        return 1;
      }
      round[i] = m->ns_per_run;
      other_runs += m->other_runs;
      all_runs += m->other_runs + static_cast<std::uint64_t>(writes);
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      per_run[i].push_back(round[i]);
      added[i].push_back(round[i] - round[0]);
    }
  }
  std::printf("helper_cost: %ld rounds of %ld writes per program; other runs %.2f%% of all\n", rounds, writes,
              100.0 * static_cast<double>(other_runs) / static_cast<double>(all_runs));
  std::printf("%-16s %12s %14s\n", "program", "ns per run", "over hc_empty");
  for (std::size_t i = 0; i < names.size(); ++i)
    std::printf("%-16s %12.1f %14.1f\n", names[i].c_str(), median(per_run[i]), median(added[i]));
  std::printf("clock_gettime(CLOCK_MONOTONIC) from user space: %.1f ns per call\n", user_clock_ns());
  close(fd);
  close(stats);
  return 0;
}
