// RdmaCapture's part for extended CQs and the NIC clock: probes on the provider's create_cq_ex
// and query_rt_values (learnt at ibv_open_device), on each extended CQ's poll and read
// functions (learnt at create_cq_ex), clock samples, and the stamp of each half.
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "capture/rdma_capture.hpp"
#include "capture/rdma_maps.hpp"
#include "rdma_verbs.skel.h"

namespace skewscope {
namespace {

static_assert(sizeof(skewscope_rdma_event) == 280);
static_assert(offsetof(skewscope_rdma_event, context) == 208);
static_assert(offsetof(skewscope_rdma_event, nic_ts) == 216);
static_assert(offsetof(skewscope_rdma_event, sample_start_ns) == 224);
static_assert(offsetof(skewscope_rdma_event, fn_ex) == 232);
static_assert(offsetof(skewscope_rdma_event, nic_stamp) == 272);

std::vector<rdma::Mapping> maps_of(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps", std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return rdma::parse_maps(s.str());
}

std::int64_t ns_of(clockid_t id) {
  timespec t{};
  clock_gettime(id, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// CLOCK_REALTIME - CLOCK_MONOTONIC, from the closest of a few back-to-back readings.
std::int64_t realtime_minus_monotonic() {
  std::int64_t best = 0, best_gap = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 3; ++i) {
    const std::int64_t m0 = ns_of(CLOCK_MONOTONIC), r = ns_of(CLOCK_REALTIME), m1 = ns_of(CLOCK_MONOTONIC);
    if (m1 - m0 < best_gap) {
      best_gap = m1 - m0;
      best = r - (m0 + (m1 - m0) / 2);
    }
  }
  return best;
}

}  // namespace

void RdmaCapture::attach_extended(const skewscope_rdma_event& e) {
  struct Probe {
    std::uint64_t address;
    bpf_program* prog;
    bool retprobe;
  };
  std::vector<std::vector<Probe>> functions;  // each function's probes; armed once all are placed
  auto& p = skel_->progs;
  if (e.kind == SKEWSCOPE_RDMA_CONTEXT) {
    functions = {{{e.fn_ex[0], p.rdma_create_cq_ex_ret, true}},
                 {{e.fn_ex[1], p.rdma_query_rt_values, false}, {e.fn_ex[1], p.rdma_query_rt_values_ret, true}}};
  } else if (e.kind == SKEWSCOPE_RDMA_CQ_EX) {
    functions = {{{e.fn[0], p.rdma_start_poll, false}, {e.fn[0], p.rdma_start_poll_ret, true}},
                 {{e.fn[1], p.rdma_next_poll_ret, true}},
                 {{e.fn[2], p.rdma_end_poll, false}},
                 {{e.fn_ex[0], p.rdma_read_opcode_ret, true}},
                 {{e.fn_ex[1], p.rdma_read_byte_len_ret, true}},
                 {{e.fn_ex[2], p.rdma_read_qp_num_ret, true}},
                 {{e.fn_ex[3], p.rdma_read_completion_ts_ret, true}},
                 {{e.fn_ex[4], p.rdma_read_wallclock_ret, true}}};
  } else {
    return;
  }
  const auto maps = maps_of(e.pid);
  // Each file opened once and every probe placed through that descriptor (as attach_provider
  // does): a process exiting meanwhile cannot leave a function half probed.
  std::map<std::string, int> fds;
  for (const auto& probes : functions) {
    if (probes.front().address == 0) continue;  // the provider offers no such function
    auto where = rdma::locate(maps, probes.front().address);
    if (!where || !where->mapping->executable) {
      ++stats_.unresolved_functions;
      continue;
    }
    const std::string path = "/proc/" + std::to_string(e.pid) + "/root" + where->mapping->path;
    auto [fd, first] = fds.try_emplace(path, -1);
    if (first) fd->second = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    std::string by_fd;
    if (fd->second >= 0 && fstat(fd->second, &st) == 0 && st.st_dev == where->mapping->dev &&
        st.st_ino == where->mapping->inode)
      by_fd = "/proc/self/fd/" + std::to_string(fd->second);
    bool all = true;
    for (const auto& probe : probes)
      all = attach(where->mapping->dev, where->mapping->inode, where->file_offset, probe.prog, probe.retprobe, path,
                   false, by_fd) &&
            all;
    if (all) arm(where->mapping->inode, where->file_offset, true);
  }
  for (const auto& [path, fd] : fds)
    if (fd >= 0) close(fd);
}

bool RdmaCapture::extended_program(const bpf_program* prog) const {
  const auto& p = skel_->progs;
  for (const bpf_program* x :
       {p.rdma_create_cq_ex_ret, p.rdma_query_rt_values, p.rdma_query_rt_values_ret, p.rdma_start_poll,
        p.rdma_start_poll_ret, p.rdma_next_poll_ret, p.rdma_end_poll, p.rdma_read_opcode_ret, p.rdma_read_byte_len_ret,
        p.rdma_read_qp_num_ret, p.rdma_read_completion_ts_ret, p.rdma_read_wallclock_ret})
    if (prog == x) return true;
  return false;
}

void RdmaCapture::sample_clock(const skewscope_rdma_event& e) {
  const ClockKey key{e.pid, e.context};
  auto it = clocks_.find(key);
  if (it == clocks_.end()) {
    // A new clock: forget those of processes that have exited (clocks are few, new ones rare).
    for (auto c = clocks_.begin(); c != clocks_.end();)
      c = access(("/proc/" + std::to_string(c->first.first)).c_str(), F_OK) == 0 ? std::next(c) : clocks_.erase(c);
    if (clocks_.size() >= kMaxClocks) {
      // Forget the clock sampled longest ago (a process that exited, most likely).
      auto oldest = clocks_.begin();
      for (auto c = clocks_.begin(); c != clocks_.end(); ++c)
        if (c->second.last_sample_ns() < oldest->second.last_sample_ns()) oldest = c;
      clocks_.erase(oldest);
      ++stats_.stamps.clocks_evicted;
    }
    it = clocks_.emplace(key, rdma::NicClock{}).first;
  }
  const rdma::NicClockSample sample{e.nic_ts, static_cast<std::int64_t>(e.sample_start_ns),
                                    static_cast<std::int64_t>(e.ts_ns)};
  ++(it->second.add(sample) ? stats_.stamps.clock_samples : stats_.stamps.clock_samples_rejected);
  stats_.stamps.clocks = clocks_.size();
}

void RdmaCapture::stamp(skewscope_rdma_event& e) {
  if (e.kind != SKEWSCOPE_RDMA_SEND && e.kind != SKEWSCOPE_RDMA_RECV) return;
  auto clock = clocks_.find(ClockKey{e.pid, e.context});
  if (e.nic_stamp == SKEWSCOPE_RDMA_NIC_WALLCLOCK && realtime_minus_monotonic_ns_ == 0)
    realtime_minus_monotonic_ns_ = realtime_minus_monotonic();
  auto& s = stats_.stamps;
  switch (rdma::resolve_stamp(e, clock == clocks_.end() ? nullptr : &clock->second, realtime_minus_monotonic_ns_)) {
    case rdma::StampOutcome::probe: ++s.probe; break;
    case rdma::StampOutcome::nic_completion: ++s.nic_completion; break;
    case rdma::StampOutcome::nic_wallclock: ++s.nic_wallclock; break;
    case rdma::StampOutcome::no_clock: ++s.no_clock; break;
    case rdma::StampOutcome::implausible: ++s.implausible; break;
    case rdma::StampOutcome::not_read: ++s.not_read; break;
  }
}

}  // namespace skewscope
