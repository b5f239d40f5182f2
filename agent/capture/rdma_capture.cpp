#include "capture/rdma_capture.hpp"
#include "capture/libbpf_log.hpp"
#include "capture/program_verify.hpp"
#include "capture/rdma_gid.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "capture/rdma_maps.hpp"
#include "rdma_verbs.skel.h"

namespace skewscope {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<rdma::Mapping> process_maps(std::uint32_t pid) {
  return rdma::parse_maps(read_file("/proc/" + std::to_string(pid) + "/maps"));
}

// The file as the process sees it, from the agent's mount namespace.
std::string through_root(std::uint32_t pid, const std::string& path) {
  return "/proc/" + std::to_string(pid) + "/root" + path;
}

// Files opened for one placement of probes, closed when it is done.
class OpenedFiles {
 public:
  OpenedFiles() = default;
  OpenedFiles(const OpenedFiles&) = delete;
  OpenedFiles& operator=(const OpenedFiles&) = delete;
  ~OpenedFiles() {
    for (auto& [path, fd] : fds_)
      if (fd >= 0) close(fd);
  }
  int get(const std::string& path) {
    auto [it, first] = fds_.try_emplace(path, -1);
    if (first) it->second = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    return it->second;
  }

 private:
  std::map<std::string, int> fds_;
};

std::string hexs(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

}  // namespace

RdmaCapture::Opened RdmaCapture::open(Log log) {
  std::unique_ptr<RdmaCapture> self(new RdmaCapture());
  self->log_ = log;
  collect_libbpf_messages();
  take_libbpf_messages();
  self->skel_ = rdma_verbs__open();
  if (!self->skel_) {
    return Opened::fail(std::string("opening BPF object rdma_verbs: ") + std::strerror(errno));
  }
  if (Status sized = CounterSlices::size_map(self->skel_->maps.rdma_counters, SKEWSCOPE_RDMA_CNT__COUNT); !sized) {
    return Opened::fail(sized.error);
  }
  if (int err = rdma_verbs__load(self->skel_)) {
    const std::string said = take_libbpf_messages();
    return Opened::fail("loading BPF programs of rdma_verbs: " +
                        (said.empty() ? std::string(std::strerror(-err)) : verdict_line(said)));
  }
  self->ring_ = ring_buffer__new(bpf_map__fd(self->skel_->maps.rdma_events), on_record, self.get(), nullptr);
  if (!self->ring_) {
    return Opened::fail(std::string("opening the RDMA ring buffer: ") + std::strerror(errno));
  }
  auto counters = CounterSlices::map(bpf_map__fd(self->skel_->maps.rdma_counters), SKEWSCOPE_RDMA_CNT__COUNT);
  if (!counters) return Opened::fail("the RDMA counters: " + counters.error);
  self->counters_.emplace(std::move(*counters));
  // The usual places of the system's libibverbs: probed before any process uses it.
  for (const char* candidate :
       {"/usr/lib/x86_64-linux-gnu/libibverbs.so.1", "/usr/lib/aarch64-linux-gnu/libibverbs.so.1",
        "/usr/lib64/libibverbs.so.1", "/usr/lib/libibverbs.so.1"}) {
    char real[PATH_MAX];
    struct stat st {};
    if (realpath(candidate, real) && stat(real, &st) == 0) self->attach_library(real, st.st_dev, st.st_ino, true);
  }
  self->scan_processes();
  return Opened::ok(std::move(self));
}

RdmaCapture::~RdmaCapture() {
  for (auto& [key, probe] : probes_) bpf_link__destroy(probe.link);
  probes_.clear();
  if (ring_) ring_buffer__free(ring_);
  if (skel_) rdma_verbs__destroy(skel_);
}

int RdmaCapture::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<RdmaCapture*>(ctx);
  if (size != sizeof(skewscope_rdma_event)) {
    ++self->stats_.malformed_records;
    return 0;
  }
  skewscope_rdma_event e;
  std::memcpy(&e, data, sizeof e);
  // A process's view of sysfs, kept from its first record on: it may exit before its connect
  // record is read (a new device context re-opens it: the pid may have been reused).
  if (e.kind == SKEWSCOPE_RDMA_CONTEXT || (e.kind == SKEWSCOPE_RDMA_QP_CREATED && !self->gid_dirs_.holds(e.pid)))
    self->gid_dirs_.hold(e.pid);
  if (e.kind == SKEWSCOPE_RDMA_CONNECT) self->resolve_local_gid(e);
  // Discovery and clock records stay here: the core pairs halves and connections only.
  if (e.kind == SKEWSCOPE_RDMA_CQ_EX) {
    ++self->stats_.extended_cqs;
    self->discovered_cqs_.push_back(e);
    return 0;
  }
  if (e.kind == SKEWSCOPE_RDMA_CLOCK_SAMPLE) {
    self->sample_clock(e);
    return 0;
  }
  self->stamp(e);
  self->sink_->push_back(e);
  // Stop this pass once the batch is full; the rest stays in the ring for the next poll.
  return self->sink_->size() >= kMaxBatch ? 1 : 0;
}

void RdmaCapture::resolve_local_gid(skewscope_rdma_event& e) {
  // Now, while the process that just moved its QP to RTR still runs: it is its view of sysfs.
  const std::string_view device(e.device, strnlen(e.device, sizeof e.device));
  if (auto gid = gid_dirs_.read(e.pid, device, e.port_num, e.sgid_index)) {
    std::memcpy(e.local_gid, gid->data(), sizeof e.local_gid);
    e.local_gid_known = 1;
    ++stats_.local_gids;
  } else {
    ++stats_.local_gid_unknown;
  }
}

bool RdmaCapture::attach(std::uint64_t dev, std::uint64_t inode, std::uint64_t offset, bpf_program* prog, bool retprobe,
                         const std::string& path, bool library, const std::string& opened) {
  ProbeKey key{dev, inode, offset, prog};
  if (probes_.contains(key)) return true;
  LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe);
  // pid -1: the probe is on the file (inode), so every process mapping it, now or later, hits it.
  bpf_link* link = bpf_program__attach_uprobe_opts(prog, -1, (opened.empty() ? path : opened).c_str(), offset, &opts);
  if (!link) {
    ++stats_.attach_failures;
    log_("rdma: cannot attach " + std::string(bpf_program__name(prog)) + " at " + path + "+" + hexs(offset) + ": " +
         std::strerror(errno));
    return false;
  }
  struct stat st {};
  const bool visible = path.rfind("/proc/", 0) != 0 || (stat(path.substr(path.find("/root/") + 5).c_str(), &st) == 0 &&
                                                        st.st_dev == dev && st.st_ino == inode);
  probes_[key] = Probe{link, dev, inode, library, offset, visible};
  log_("rdma: attached " + std::string(bpf_program__name(prog)) + " at " + path + "+" + hexs(offset) + " (device " +
       std::to_string(dev) + ", inode " + std::to_string(inode) + ")");
  return true;
}

void RdmaCapture::arm(std::uint64_t inode, std::uint64_t offset, bool on) {
  struct {
    std::uint64_t inode, offset;
  } key{inode, offset};
  std::uint8_t one = 1;
  const int fd = bpf_map__fd(skel_->maps.armed_functions);
  if (on) {
    bpf_map_update_elem(fd, &key, &one, BPF_ANY);
  } else {
    bpf_map_delete_elem(fd, &key);
  }
}

void RdmaCapture::attach_library(const std::string& file, std::uint64_t dev, std::uint64_t inode, bool visible) {
  (void)visible;
  // The file on disk must be the one mapped: checked by (device, inode) through the same root.
  struct stat st {};
  if (stat(file.c_str(), &st) != 0 || st.st_dev != dev || st.st_ino != inode) return;
  const std::string elf = read_file(file);
  struct Entry {
    const char* symbol;
    bpf_program* prog;
    bool retprobe;
  };
  const Entry entries[] = {{"ibv_open_device", skel_->progs.rdma_open_device_ret, true},
                           {"ibv_create_qp", skel_->progs.rdma_create_qp_ret, true},
                           {"ibv_modify_qp", skel_->progs.rdma_modify_qp, false}};
  for (const auto& entry : entries) {
    auto offset = rdma::versioned_symbol_offset(elf, entry.symbol, "IBVERBS_1.1");
    if (!offset) {
      ++stats_.attach_failures;
      log_("rdma: " + file + ": " + offset.error);
      continue;
    }
    attach(dev, inode, *offset, entry.prog, entry.retprobe, file, true);
  }
}

void RdmaCapture::attach_provider(const skewscope_rdma_event& e) {
  if (e.fn[0] == 0 && e.fn[2] == 0) return;
  const auto maps = process_maps(e.pid);
  // Each provider file is opened once, up front: the probes are then placed through that
  // descriptor, so a process that exits while they are being placed (each placement takes a
  // while) cannot leave a function half probed.
  OpenedFiles opened;
  auto place = [&](std::uint64_t address, bpf_program* prog,
                   bool retprobe) -> std::optional<std::pair<std::uint64_t, std::uint64_t>> {
    auto where = rdma::locate(maps, address);
    if (!where || !where->mapping->executable) {
      ++stats_.unresolved_functions;
      return std::nullopt;
    }
    const std::string path = through_root(e.pid, where->mapping->path);
    const int fd = opened.get(path);
    struct stat st {};
    std::string by_fd;
    // Only the very file the process maps, checked by (device, inode) on the open descriptor.
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == where->mapping->dev && st.st_ino == where->mapping->inode)
      by_fd = "/proc/self/fd/" + std::to_string(fd);
    return attach(where->mapping->dev, where->mapping->inode, where->file_offset, prog, retprobe, path, false, by_fd)
               ? std::optional<std::pair<std::uint64_t, std::uint64_t>>({where->mapping->inode, where->file_offset})
               : std::nullopt;
  };
  // Armed only once every probe of the function is in place.
  if (auto at = place(e.fn[0], skel_->progs.rdma_post_send, false)) arm(at->first, at->second, true);
  auto entry = place(e.fn[2], skel_->progs.rdma_poll_cq, false);
  auto ret = place(e.fn[2], skel_->progs.rdma_poll_cq_ret, true);
  if (entry && ret) arm(entry->first, entry->second, true);
}

void RdmaCapture::scan_processes() {
  std::set<std::pair<std::uint64_t, std::uint64_t>> mapped;  // every (dev, inode) a process maps
  std::set<std::uint32_t> alive;
  const auto own = static_cast<std::uint32_t>(getpid());
  if (DIR* proc = opendir("/proc")) {
    while (dirent* d = readdir(proc)) {
      char* end = nullptr;
      unsigned long pid = std::strtoul(d->d_name, &end, 10);
      if (*end != '\0' || pid == 0 || pid == own) continue;
      alive.insert(static_cast<std::uint32_t>(pid));
      for (const auto& m : process_maps(static_cast<std::uint32_t>(pid))) {
        mapped.emplace(m.dev, m.inode);
        if (rdma::is_libibverbs(m.path) && m.executable)
          attach_library(through_root(static_cast<std::uint32_t>(pid), m.path), m.dev, m.inode, false);
      }
    }
    closedir(proc);
    gid_dirs_.forget_gone(alive);
  }
  for (auto it = probes_.begin(); it != probes_.end();) {
    if (it->second.visible || mapped.contains({it->second.dev, it->second.inode})) {
      ++it;
      continue;
    }
    if (!it->second.library) arm(it->second.inode, it->second.offset, false);
    bpf_link__destroy(it->second.link);
    ++stats_.detached;
    it = probes_.erase(it);
  }
  next_scan_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
}

bool RdmaCapture::poll(std::vector<skewscope_rdma_event>& out, std::chrono::milliseconds timeout) {
  const std::size_t first = out.size();
  sink_ = &out;
  // Data records are submitted without a wake-up, control records with one: wait until one of
  // those comes or the timeout ends, then consume whatever is there.
  realtime_minus_monotonic_ns_ = 0;
  int n = timeout.count() > 0 ? ring_buffer__poll(ring_, static_cast<int>(timeout.count())) : 0;
  if (n >= 0 || n == -EINTR) n = ring_buffer__consume(ring_);
  sink_ = nullptr;
  if (n < 0 && n != -EINTR) {
    error_ = std::string("reading the RDMA ring buffer: ") + std::strerror(-n);
    return false;
  }
  // A context's create_cq_ex is probed before its post_send / poll_cq are armed, so a tracked QP's
  // extended CQ was registered by the kernel side unless it was created earlier: the receives of
  // such an unregistered CQ are never numbered (counted untracked; bpf/lib/rdma_cq_ex.bpf.h).
  for (std::size_t i = first; i < out.size(); ++i)
    if (out[i].kind == SKEWSCOPE_RDMA_CONTEXT) attach_extended(out[i]);
  for (const auto& cq : discovered_cqs_) attach_extended(cq);
  discovered_cqs_.clear();
  for (std::size_t i = first; i < out.size(); ++i)
    if (out[i].kind == SKEWSCOPE_RDMA_CONTEXT || out[i].kind == SKEWSCOPE_RDMA_QP_CREATED) attach_provider(out[i]);
  if (std::chrono::steady_clock::now() >= next_scan_) scan_processes();
  return true;
}

RdmaSourceCounters RdmaCapture::counters() const {
  RdmaSourceCounters c = stats_;
  for (const auto& [key, probe] : probes_)
    ++(probe.library ? c.library_probes : extended_program(std::get<3>(key)) ? c.extended_probes : c.provider_probes);
  if (!counters_) return c;
  const std::vector<std::uint64_t> sums = counters_->sums();
  for (std::uint32_t i = 0; i < SKEWSCOPE_RDMA_CNT__COUNT; ++i) c.kernel[i] += sums[i];
  return c;
}

}  // namespace skewscope
