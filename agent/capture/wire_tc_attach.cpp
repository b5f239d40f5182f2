// Attaching and detaching the wire_tc filters on one interface, inside its network namespace;
// the ownership rules (whose clsact, whose filter) are in wire_capture.hpp. Also ethtool's
// timestamping info, which must be read in the interface's namespace in the same way.
#include "capture/wire_tc_attach.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

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
              // Either tc variant: wire_ingress/wire_egress, or wire_ingress_ctx/wire_egress_ctx (whose
              // kernel names are cut to 15 characters).
              (std::strncmp(info.name, "wire_ingress", 12) == 0 || std::strncmp(info.name, "wire_egress", 11) == 0);
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

Status attach_wire_filters(WireAttachment& slot, int ingress_fd, int egress_fd, bool tc_egress) {
  const WireInterface& iface = slot.iface;
  return in_netns(iface.netns_path, [&]() -> Status {
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
}

void detach_wire_filters(const WireAttachment& a) {
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

}  // namespace skewscope
