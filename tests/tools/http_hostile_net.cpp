// The loopback plumbing of http_hostile (see http_hostile_net.hpp): sockets, deadlines, and one
// request read to its end.
#include "http_hostile_net.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace http_hostile {

sockaddr_in ipv4(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("bad IPv4 address " + address);
  return addr;
}

int start_connect(const sockaddr_in& target, const std::string& source) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from = ipv4(source, 0);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      (connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0 && errno != EINPROGRESS)) {
    close(fd);
    return -1;
  }
  return fd;
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  const int ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  if (ms <= 0) return false;
  pollfd p{fd, events, 0};
  return poll(&p, 1, ms) > 0;
}

Reply request(const sockaddr_in& target, const std::string& source, const std::string& text, double timeout_s) {
  Reply reply;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  int fd = start_connect(target, source);
  if (fd < 0) return reply;
  std::size_t sent = 0;
  while (sent < text.size() && wait_for(fd, POLLOUT, deadline)) {
    ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  char buf[65536];
  while (wait_for(fd, POLLIN, deadline)) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) {
      reply.ok = n == 0 && sent == text.size() && reply.status() != 0;
      break;
    }
    reply.raw.append(buf, static_cast<std::size_t>(n));
  }
  reply.seconds = since(start);
  close(fd);
  return reply;
}

std::string get_request(const std::string& path, const std::string& extra) {
  return "GET " + path + " HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n" + extra + "\r\n";
}

}  // namespace http_hostile
