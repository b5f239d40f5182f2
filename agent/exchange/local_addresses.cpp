#include "exchange/local_addresses.hpp"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace skewscope::exchange {
namespace {

Address from_rtattr(int family, const void* data) {
  Address a{};
  if (family == AF_INET) {
    a[10] = a[11] = 0xff;
    std::memcpy(a.data() + 12, data, 4);
  } else {
    std::memcpy(a.data(), data, 16);
  }
  return a;
}

// One RTM_GETADDR dump on a fresh NETLINK_ROUTE socket of the calling thread's namespace.
Result<std::set<Address>> dump_addresses() {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return Result<std::set<Address>>::fail(std::string("netlink socket: ") + std::strerror(errno));
  std::set<Address> out;
  std::string error;
  struct {
    nlmsghdr nh;
    ifaddrmsg ifa;
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(ifaddrmsg));
  req.nh.nlmsg_type = RTM_GETADDR;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.nh.nlmsg_seq = 1;
  req.ifa.ifa_family = AF_UNSPEC;
  bool ok = send(fd, &req, req.nh.nlmsg_len, 0) >= 0;
  if (!ok) error = std::string("netlink send: ") + std::strerror(errno);
  alignas(nlmsghdr) char buf[32768];
  for (bool done = !ok; !done;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      error = std::string("netlink recv: ") + (n < 0 ? std::strerror(errno) : "closed");
      ok = false;
      break;
    }
    for (auto* nh = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(nh, static_cast<unsigned>(n)); nh = NLMSG_NEXT(nh, n)) {
      if (nh->nlmsg_type == NLMSG_DONE) {
        done = true;
        break;
      }
      if (nh->nlmsg_type == NLMSG_ERROR) {
        error = "netlink dump refused";
        ok = false;
        done = true;
        break;
      }
      if (nh->nlmsg_type != RTM_NEWADDR) continue;
      auto* ifa = static_cast<ifaddrmsg*>(NLMSG_DATA(nh));
      if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) continue;
      int len = static_cast<int>(IFA_PAYLOAD(nh));
      for (auto* rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        const std::size_t want = ifa->ifa_family == AF_INET ? 4 : 16;
        if ((rta->rta_type == IFA_LOCAL || rta->rta_type == IFA_ADDRESS) && RTA_PAYLOAD(rta) == want)
          out.insert(from_rtattr(ifa->ifa_family, RTA_DATA(rta)));
      }
    }
  }
  close(fd);
  return ok ? Result<std::set<Address>>::ok(std::move(out)) : Result<std::set<Address>>::fail(std::move(error));
}

}  // namespace

Result<std::set<Address>> read_netns_addresses(const std::string& netns_path) {
  if (netns_path.empty()) return dump_addresses();
  auto found = Result<std::set<Address>>::fail("");
  // setns() changes the namespace of the calling thread only: this thread exists for that.
  std::thread reader([&] {
    int ns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
      found.error = netns_path + ": " + std::strerror(errno);
      return;
    }
    if (setns(ns, CLONE_NEWNET) != 0) {
      found.error = netns_path + ": setns: " + std::strerror(errno);
      close(ns);
      return;
    }
    close(ns);
    found = dump_addresses();
  });
  reader.join();
  return found;
}

}  // namespace skewscope::exchange
