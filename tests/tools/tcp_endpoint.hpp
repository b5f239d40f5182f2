// TCP helpers for lab_traffic (tests/tools/traffic*.cpp):
// endpoints as ADDR:PORT (IPv4) or [ADDR%IFACE]:PORT (IPv6, the scope for a link-local address),
// a connect that waits for a server still starting in its namespace, and whole-buffer reads and
// writes.
#pragma once

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace skewscope::tools {

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t length = 0;
  int family() const { return addr.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&addr); }
};

// Numeric only (no name lookup): getaddrinfo resolves the %IFACE scope of a link-local address.
inline Endpoint parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    throw std::runtime_error("endpoint must be ADDR:PORT or [ADDR]:PORT, got '" + text + "'");
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = text.substr(colon + 1);
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || !found)
    throw std::runtime_error("bad address or port in '" + text + "'");
  Endpoint e;
  std::memcpy(&e.addr, found->ai_addr, found->ai_addrlen);
  e.length = found->ai_addrlen;
  freeaddrinfo(found);
  return e;
}

// Retries until the server listens, for at most timeout_s (or until *stop). TCP_NODELAY: each
// write is one message on the wire, as the tests count them.
// `before_connect`, when given, sets options that must precede the handshake (SO_SNDBUF).
inline int connect_to(const std::string& endpoint, double timeout_s, const std::atomic<bool>* stop = nullptr,
                      const std::function<void(int)>& before_connect = {}) {
  const Endpoint addr = parse_endpoint(endpoint);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int fd = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (before_connect) before_connect(fd);
    if (connect(fd, addr.get(), addr.length) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    close(fd);
    if ((stop && *stop) || std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("cannot connect to " + endpoint);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// `writes`, when given, counts the write() calls that moved bytes: each is one send half.
inline bool write_all(int fd, const char* data, std::size_t n, long* writes = nullptr) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w > 0 && writes) ++*writes;
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

inline bool read_exact(int fd, char* data, std::size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, data, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    data += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace skewscope::tools
