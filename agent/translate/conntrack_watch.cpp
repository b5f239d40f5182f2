#include "translate/conntrack_watch.hpp"

#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_compat.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace skewscope::translate {

namespace {

// Large enough for the NEW events of a burst of connections between two 20 ms drains.
constexpr int kReceiveBuffer = 4 << 20;

Result<int> open_socket_here() {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0) return Result<int>::fail(std::string("netlink socket: ") + std::strerror(errno));
  // Root may exceed net.core.rmem_max; without the privilege, the capped size is still a buffer.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kReceiveBuffer, sizeof kReceiveBuffer) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kReceiveBuffer, sizeof kReceiveBuffer);
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_DESTROY;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    close(fd);
    return Result<int>::fail(std::string("conntrack events: ") + std::strerror(error));
  }
  return Result<int>::ok(fd);
}

// A socket belongs to the namespace it was created in: create it on a short-lived thread that
// entered the namespace, so no other thread of the agent ever changes namespace.
Result<int> open_socket_in(const std::string& path) {
  if (path == "self") return open_socket_here();
  Result<int> result = Result<int>::fail("not opened");
  std::thread([&] {
    const int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
      result = Result<int>::fail(std::string("cannot open: ") + std::strerror(errno));
      return;
    }
    if (setns(ns, CLONE_NEWNET) != 0) {
      result = Result<int>::fail(std::string("not a network namespace or not allowed: ") + std::strerror(errno));
      close(ns);
      return;
    }
    close(ns);
    result = open_socket_here();
  }).join();
  return result;
}

}  // namespace

Result<std::unique_ptr<ConntrackWatch>> ConntrackWatch::open(const std::vector<std::string>& namespaces) {
  using R = Result<std::unique_ptr<ConntrackWatch>>;
  std::unique_ptr<ConntrackWatch> watch(new ConntrackWatch());
  for (const std::string& path : namespaces) {
    auto fd = open_socket_in(path);
    if (!fd) return R::fail(path + ": " + fd.error);
    watch->fds_.push_back(*fd);
    watch->dumping_.push_back(false);
    watch->report_.namespaces.push_back(WatchedNamespace{path});
  }
  for (std::size_t i = 0; i < watch->fds_.size(); ++i) watch->request_dump(i);
  watch->buffer_.resize(1 << 16);
  return R::ok(std::move(watch));
}

ConntrackWatch::~ConntrackWatch() {
  for (int fd : fds_) close(fd);
}

void ConntrackWatch::request_dump(std::size_t index) {
  struct {
    nlmsghdr header;
    nfgenmsg family;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = next_seq_++;
  request.family.nfgen_family = AF_UNSPEC;  // every address family
  request.family.version = NFNETLINK_V0;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ++report_.namespaces[index].dumps;
  if (sendto(fds_[index], &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    ++report_.namespaces[index].dump_errors;
    return;
  }
  dumping_[index] = true;
}

void ConntrackWatch::drain(std::vector<ConntrackEntry>& entries) {
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    WatchedNamespace& ns = report_.namespaces[i];
    for (;;) {
      const ssize_t n = recv(fds_[i], buffer_.data(), buffer_.size(), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {
          // Events were lost: list the table again (unless a dump is already under way, which
          // lists it too) so that no live translated connection stays unknown.
          ++ns.overflows;
          if (!dumping_[i]) request_dump(i);
          continue;
        }
        break;  // EAGAIN: nothing more queued
      }
      ++ns.datagrams;
      const std::size_t before = entries.size();
      const DatagramEnd end = decode_conntrack_datagram(
          std::span<const std::uint8_t>(buffer_.data(), static_cast<std::size_t>(n)), entries, report_.rejected);
      ns.entries += entries.size() - before;
      if (end.error != 0) ++ns.dump_errors;
      if (end.dump_done || end.error != 0) dumping_[i] = false;
    }
  }
}

}  // namespace skewscope::translate
