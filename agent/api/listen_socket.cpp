#include "api/listen_socket.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/in.h>
#include <cerrno>
#include <cstring>

namespace skewscope {
namespace {

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return -1;
}

}  // namespace

Result<ListenSocket> open_listen_socket(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  ListenSocket result;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    // EAI_SYSTEM is the only resolver error whose reason is in errno.
    return Result<ListenSocket>::fail("cannot resolve " + where + ": " +
                                      (rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      result.fd = fd;
      result.port = bound_port(fd);
      break;
    }
    last_error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (result.fd < 0) return Result<ListenSocket>::fail("cannot listen on " + where + ": " + last_error);
  return Result<ListenSocket>::ok(result);
}

}  // namespace skewscope
