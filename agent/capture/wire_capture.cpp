#include "capture/wire_capture.hpp"
#include "capture/percpu_counters.hpp"
#include "capture/ring_batch.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/magic.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "wire_sockops.skel.h"
#include "wire_tc.skel.h"

namespace skewscope {
namespace {

// Our filters sit at this handle and priority on both sides of the clsact: one place to find
// (and, after a crash, replace) them without touching anyone else's filters.
constexpr std::uint32_t kFilterHandle = 0x5357;  // "SW"
constexpr std::uint32_t kFilterPriority = 0x5357;

// setns(2) moves only the calling thread, and libbpf's tc calls open their netlink socket in the
// caller's namespace: each namespace's work runs on a short-lived thread of its own, so the
// agent's other threads never leave their namespace. An empty path: the agent's own namespace.
Status in_netns(const std::string& path, const std::function<Status()>& work) {
  Status result;
  std::thread t([&] {
    if (!path.empty()) {
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        result = Status::fail("cannot open network namespace " + path + ": " + std::strerror(errno));
        return;
      }
      int rc = ::setns(fd, CLONE_NEWNET);
      int err = errno;
      ::close(fd);
      if (rc != 0) {
        result = Status::fail("cannot enter network namespace " + path + ": " + std::strerror(err));
        return;
      }
    }
    result = work();
  });
  t.join();
  return result;
}

std::uint32_t current_netns_ino() {
  struct stat st {};
  return ::stat("/proc/thread-self/ns/net", &st) == 0 ? static_cast<std::uint32_t>(st.st_ino) : 0;
}

std::string marker_path(std::uint32_t netns_ino, int ifindex) {
  return std::string(kWireStateDir) + "/clsact-" + std::to_string(netns_ino) + "-" + std::to_string(ifindex);
}

// The clsact of this interface was created by an agent that is gone: it is ours to remove. The
// mark names the interface too: a mark whose namespace was deleted (its inode and ifindex later
// reused) must not make a new agent remove an operator's qdisc, and the name must match as well.
bool qdisc_left_by_dead_agent(const std::string& marker, const std::string& ifname) {
  std::ifstream in(marker);
  long pid = 0;
  std::string name;
  if (!(in >> pid >> name) || pid <= 0 || name != ifname) return false;
  if (pid == ::getpid()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

bool write_marker(const std::string& marker, const std::string& ifname) {
  std::error_code ec;
  std::filesystem::create_directories(kWireStateDir, ec);
  std::ofstream out(marker, std::ios::trunc);
  out << ::getpid() << " " << ifname << "\n";
  return static_cast<bool>(out);
}

bool is_our_program(std::uint32_t prog_id) {
  int fd = bpf_prog_get_fd_by_id(prog_id);
  if (fd < 0) return false;
  bpf_prog_info info{};
  std::uint32_t len = sizeof info;
  bool ours = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
              (std::strcmp(info.name, "wire_ingress") == 0 || std::strcmp(info.name, "wire_egress") == 0);
  ::close(fd);
  return ours;
}

bpf_tc_hook hook_for(int ifindex, bpf_tc_attach_point point) {
  bpf_tc_hook hook{};
  hook.sz = sizeof hook;
  hook.ifindex = ifindex;
  hook.attach_point = point;
  return hook;
}

bpf_tc_opts filter_opts(int prog_fd) {
  bpf_tc_opts opts{};
  opts.sz = sizeof opts;
  opts.handle = kFilterHandle;
  opts.priority = kFilterPriority;
  opts.prog_fd = prog_fd;
  return opts;
}

// Attaches `prog_fd` at our handle/priority on one side, replacing a filter of ours that a dead
// agent left there; refuses to touch a foreign filter.
Status attach_side(int ifindex, bpf_tc_attach_point point, int prog_fd, bool& recovered) {
  bpf_tc_hook hook = hook_for(ifindex, point);
  bpf_tc_opts query = filter_opts(0);
  if (bpf_tc_query(&hook, &query) == 0) {
    if (!is_our_program(query.prog_id))
      return Status::fail("tc filter handle 0x5357 priority 0x5357 is used by another program (id " +
                          std::to_string(query.prog_id) + ")");
    bpf_tc_opts old = filter_opts(0);
    bpf_tc_detach(&hook, &old);
    recovered = true;
  }
  bpf_tc_opts opts = filter_opts(prog_fd);
  if (int err = bpf_tc_attach(&hook, &opts); err != 0)
    return Status::fail(std::string("attaching the tc ") + (point == BPF_TC_INGRESS ? "ingress" : "egress") +
                        " program: " + std::strerror(-err));
  return Status::ok();
}

}  // namespace

Result<std::vector<WireInterface>> parse_wire_interfaces(const std::vector<std::string>& specs) {
  std::vector<WireInterface> out;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    std::size_t start = 0;
    while (start <= spec.size()) {
      std::size_t comma = spec.find(',', start);
      std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
      WireInterface w;
      std::size_t at = item.find('@');
      w.name = item.substr(0, at);
      if (at != std::string::npos) w.netns_path = item.substr(at + 1);
      if (w.name.empty() || w.name.size() >= IF_NAMESIZE || w.name.find('/') != std::string::npos ||
          w.name.find_first_of(" \t:") != std::string::npos)
        return Result<std::vector<WireInterface>>::fail("--wire-timestamps: '" + item +
                                                        "' is not IFACE or IFACE@NETNS_PATH");
      if (at != std::string::npos && (w.netns_path.empty() || w.netns_path.front() != '/'))
        return Result<std::vector<WireInterface>>::fail("--wire-timestamps: '" + item +
                                                        "': the namespace must be an absolute path");
      if (!seen.insert(w.label()).second)
        return Result<std::vector<WireInterface>>::fail("--wire-timestamps: '" + w.label() + "' is named twice");
      out.push_back(w);
    }
  }
  return Result<std::vector<WireInterface>>::ok(std::move(out));
}

bool kernel_has_tx_timestamping_callbacks() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return false;
  bool found = btf__find_by_name_kind(vmlinux, "bpf_sock_ops_enable_tx_tstamp", BTF_KIND_FUNC) > 0;
  btf__free(vmlinux);
  return found;
}

Status check_wire_cgroup(const std::string& path) {
  if (path.empty() || path.front() != '/') return Status::fail("--wire-cgroup '" + path + "' must be an absolute path");
  struct statfs fs {};
  struct stat st {};
  if (::statfs(path.c_str(), &fs) != 0 || ::stat(path.c_str(), &st) != 0)
    return Status::fail("--wire-cgroup " + path + ": " + std::strerror(errno));
  if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode))
    return Status::fail("--wire-cgroup " + path + " is not a cgroup v2 directory");
  // The root of a cgroup2 mount is inode 1: attaching there would stamp every socket of the host.
  if (st.st_ino == 1) return Status::fail("--wire-cgroup " + path + " is the root cgroup: name a cgroup below it");
  return Status::ok();
}

Result<TsInfo> read_ts_info(const WireInterface& iface) {
  TsInfo ts;
  const Status read = in_netns(iface.netns_path, [&]() -> Status {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::fail(std::string("socket: ") + std::strerror(errno));
    ethtool_ts_info info{};
    info.cmd = ETHTOOL_GET_TS_INFO;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, iface.name.c_str(), IF_NAMESIZE - 1);
    ifr.ifr_data = reinterpret_cast<char*>(&info);
    int rc = ::ioctl(fd, SIOCETHTOOL, &ifr);
    int err = errno;
    ::close(fd);
    if (rc != 0) return Status::fail("ETHTOOL_GET_TS_INFO on " + iface.label() + ": " + std::strerror(err));
    ts.phc_index = info.phc_index;
    ts.so_timestamping = info.so_timestamping;
    return Status::ok();
  });
  return read ? Result<TsInfo>::ok(ts) : Result<TsInfo>::fail(read.error);
}

Result<std::unique_ptr<WireCapture>> WireCapture::open(const WireOptions& options) {
  using Opened = Result<std::unique_ptr<WireCapture>>;
  const auto& interfaces = options.interfaces;
  std::unique_ptr<WireCapture> self(new WireCapture());
  // The send side, decided once: sock_ops where the operator named cgroups and the kernel has
  // the callbacks; tc egress otherwise (and then every named interface gets an egress filter).
  const bool callbacks = kernel_has_tx_timestamping_callbacks();
  if (!options.cgroups.empty() && callbacks) {
    self->send_path_ = kSendPathSockOps;
    self->send_path_reason_ = "--wire-cgroup given and the kernel has the sock_ops TX timestamping callbacks";
  } else {
    self->send_path_ = kSendPathTcEgress;
    self->send_path_reason_ = options.cgroups.empty()
                                  ? "no --wire-cgroup: segments are stamped at tc egress of the named interfaces"
                                  : "the kernel has no sock_ops TX timestamping callbacks (Linux < 6.14)";
  }
  // Data segments at egress only with the tc send side; ACK samples leave through egress too.
  self->skel_ = wire_tc__open();
  if (!self->skel_) {
    return Opened::fail(std::string("opening BPF object wire_tc: ") + std::strerror(errno));
  }
  self->skel_->rodata->egress_data = self->send_path_ == kSendPathTcEgress ? 1 : 0;
  self->skel_->rodata->ack_samples = options.ack_samples ? 1 : 0;
  if (int err = wire_tc__load(self->skel_)) {
    return Opened::fail(std::string("loading BPF object wire_tc: ") + std::strerror(-err));
  }
  if (self->send_path_ == kSendPathSockOps) {
    self->sockops_ = wire_sockops__open();
    if (!self->sockops_) {
      return Opened::fail(std::string("opening BPF object wire_sockops: ") + std::strerror(errno));
    }
    // One ring buffer and one set of counters for both objects: one reader, one count.
    bpf_map__reuse_fd(self->sockops_->maps.wire_halves, bpf_map__fd(self->skel_->maps.wire_halves));
    bpf_map__reuse_fd(self->sockops_->maps.wire_counters, bpf_map__fd(self->skel_->maps.wire_counters));
    if (int err = wire_sockops__load(self->sockops_)) {
      return Opened::fail(std::string("loading BPF object wire_sockops: ") + std::strerror(-err));
    }
    for (const auto& path : options.cgroups) {
      int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        return Opened::fail("--wire-cgroup " + path + ": " + std::strerror(errno));
      }
      bpf_link* link = bpf_program__attach_cgroup(self->sockops_->progs.wire_sockops, fd);
      int err = errno;
      ::close(fd);
      if (!link) {
        return Opened::fail("attaching the sock_ops program to " + path + ": " + std::strerror(err));
      }
      self->cgroup_links_.push_back(link);
    }
  }
  const bool tc_egress = self->send_path_ == kSendPathTcEgress || options.ack_samples;
  // The receive stamp: hold the net_timestamp static key for as long as the agent runs.
  self->rx_stamp_socket_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (self->rx_stamp_socket_ >= 0) {
    int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    if (::setsockopt(self->rx_stamp_socket_, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) != 0) {
      ::close(self->rx_stamp_socket_);
      self->rx_stamp_socket_ = -1;  // receives are then stamped by the program (counted)
    }
  }
  const int ingress_fd = bpf_program__fd(self->skel_->progs.wire_ingress);
  const int egress_fd = bpf_program__fd(self->skel_->progs.wire_egress);
  for (const auto& iface : interfaces) {
    WireAttachment a;
    a.iface = iface;
    if (auto ts = read_ts_info(iface)) {  // optional: veths answer
      a.phc_index = ts->phc_index;
      a.so_timestamping = ts->so_timestamping;
    }
    // Recorded before attaching, so that the destructor undoes whatever part succeeded.
    self->attachments_.push_back(a);
    WireAttachment& slot = self->attachments_.back();
    const Status attached = in_netns(iface.netns_path, [&]() -> Status {
      slot.ifindex = static_cast<int>(if_nametoindex(iface.name.c_str()));
      if (slot.ifindex == 0) return Status::fail("no interface " + iface.label());
      slot.netns_ino = current_netns_ino();
      bpf_tc_hook hook = hook_for(slot.ifindex, static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
      const std::string marker = marker_path(slot.netns_ino, slot.ifindex);
      int err = bpf_tc_hook_create(&hook);
      if (err == 0) {
        slot.created_qdisc = true;
      } else if (err == -EEXIST) {
        slot.created_qdisc = qdisc_left_by_dead_agent(marker, iface.name);
      } else {
        return Status::fail("creating the clsact qdisc on " + iface.label() + ": " + std::strerror(-err));
      }
      if (slot.created_qdisc && !write_marker(marker, iface.name))
        return Status::fail("cannot write " + marker + " (the mark that lets a restarted agent remove this qdisc)");
      if (Status in = attach_side(slot.ifindex, BPF_TC_INGRESS, ingress_fd, slot.recovered_filters); !in)
        return Status::fail(in.error + " on " + iface.label());
      if (!tc_egress) {
        // A filter of ours left on egress by an agent that used tc egress: not ours to keep.
        bpf_tc_hook egress = hook_for(slot.ifindex, BPF_TC_EGRESS);
        bpf_tc_opts left = filter_opts(0);
        if (bpf_tc_query(&egress, &left) == 0 && is_our_program(left.prog_id)) {
          bpf_tc_opts del = filter_opts(0);
          bpf_tc_detach(&egress, &del);
        }
        return Status::ok();
      }
      if (Status out = attach_side(slot.ifindex, BPF_TC_EGRESS, egress_fd, slot.recovered_filters); !out)
        return Status::fail(out.error + " on " + iface.label());
      return Status::ok();
    });
    if (!attached) return Opened::fail(attached.error);  // the destructor detaches what was attached
  }
  self->ring_ =
      ring_buffer__new(bpf_map__fd(self->skel_->maps.wire_halves), &WireCapture::on_record, self.get(), nullptr);
  if (!self->ring_) {
    return Opened::fail(std::string("creating the wire ring buffer reader: ") + std::strerror(errno));
  }
  return Opened::ok(std::move(self));
}

void WireCapture::detach_all() {
  for (const auto& a : attachments_) {
    if (a.ifindex == 0) continue;
    // A namespace that is gone took its interfaces, qdiscs and filters with it.
    in_netns(a.iface.netns_path, [&]() -> Status {
      if (current_netns_ino() != a.netns_ino) return Status::ok();
      for (auto point : {BPF_TC_INGRESS, BPF_TC_EGRESS}) {
        bpf_tc_hook hook = hook_for(a.ifindex, point);
        bpf_tc_opts opts = filter_opts(0);
        if (bpf_tc_query(&hook, &opts) == 0 && is_our_program(opts.prog_id)) {
          bpf_tc_opts del = filter_opts(0);
          bpf_tc_detach(&hook, &del);
        }
      }
      if (a.created_qdisc) {
        // Both sides at once: destroying one attach point alone removes its filters but keeps
        // the qdisc.
        bpf_tc_hook hook = hook_for(a.ifindex, static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
        bpf_tc_hook_destroy(&hook);
      }
      return Status::ok();
    });
    if (a.created_qdisc) {
      std::error_code ec;
      std::filesystem::remove(marker_path(a.netns_ino, a.ifindex), ec);
    }
  }
  attachments_.clear();
}

WireCapture::~WireCapture() {
  if (ring_) ring_buffer__free(ring_);
  for (bpf_link* link : cgroup_links_) bpf_link__destroy(link);
  detach_all();
  if (sockops_) wire_sockops__destroy(sockops_);
  if (skel_) wire_tc__destroy(skel_);
  if (rx_stamp_socket_ >= 0) ::close(rx_stamp_socket_);  // gives back our net_timestamp reference
}

int WireCapture::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<WireCapture*>(ctx);
  return append_ring_record(*self->sink_, self->malformed_, data, size, kMaxBatch);
}

bool WireCapture::poll(std::vector<skewscope_wire_event>& out, std::chrono::milliseconds timeout) {
  const int n = poll_ring_batch(ring_, sink_, out, kMaxBatch, timeout);
  if (n == 0) return true;
  error_ = std::string("reading the wire ring buffer failed: ") + std::strerror(-n);
  return false;
}

WireCounters WireCapture::counters() const {
  WireCounters c;
  c.malformed_records = malformed_.load(std::memory_order_relaxed);
  PerCpuCounters counters(bpf_map__fd(skel_->maps.wire_counters));
  if (!counters.usable()) return c;
  auto sum = [&](std::uint32_t slot) { return counters.sum(slot); };
  c.emitted = sum(SKEWSCOPE_WIRE_CNT_EMITTED);
  c.ringbuf_full = sum(SKEWSCOPE_WIRE_CNT_RINGBUF_FULL);
  c.rx_skb_stamped = sum(SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED);
  c.rx_unstamped = sum(SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED);
  c.hw_stamped = sum(SKEWSCOPE_WIRE_CNT_HW_STAMPED);
  c.not_parsed = sum(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
  return c;
}

}  // namespace skewscope
