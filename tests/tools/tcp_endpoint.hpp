// TCP helpers for lab_traffic (tests/tools/traffic*.cpp):
// endpoints as ADDR:PORT, a connect that waits for a server still starting in its namespace,
// and whole-buffer reads and writes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace skewscope::tools {

inline sockaddr_in parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("endpoint must be ADDR:PORT");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1))));
  if (inet_pton(AF_INET, text.substr(0, colon).c_str(), &addr.sin_addr) != 1)
    throw std::runtime_error("bad IPv4 address in " + text);
  return addr;
}

// Retries until the server listens, for at most timeout_s (or until *stop). TCP_NODELAY: each
// write is one message on the wire, as the tests count them.
inline int connect_to(const std::string& endpoint, double timeout_s, const std::atomic<bool>* stop = nullptr) {
  sockaddr_in addr = parse_endpoint(endpoint);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
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
