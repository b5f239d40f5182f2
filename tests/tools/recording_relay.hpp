// A TCP relay on 127.0.0.1 that records every read it makes, per connection, in the capture file
// format the protocol tests replay (tests/data/protocols/README.md):
//   repeated { u8 direction (0 client→server, 1 server→client), u32 length, u32 captured,
//              u64 ts_ns (CLOCK_MONOTONIC of the read), captured bytes }   integers little-endian
// The recorder always writes captured == length; tests truncate prefixes themselves.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace skewscope::tools {

inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

class RecordingRelay {
 public:
  // Listens on 127.0.0.1:(ephemeral) and forwards each accepted connection to 127.0.0.1:upstream.
  // Connection n is written to `<prefix>-<n>.cap`, prefix as set when it was accepted.
  RecordingRelay(std::uint16_t upstream_port, std::string prefix, std::size_t read_size)
      : upstream_(upstream_port), prefix_(std::move(prefix)), read_size_(read_size) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(0);
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(listen_fd_, 16) != 0)
      throw std::runtime_error("relay: cannot listen on 127.0.0.1");
    socklen_t len = sizeof a;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~RecordingRelay() { stop(); }

  std::uint16_t port() const { return port_; }
  void set_prefix(const std::string& p) {
    std::lock_guard<std::mutex> lock(mu_);
    prefix_ = p;
  }
  // Stops accepting, waits for every relayed connection to close (both ends), writes the files.
  void stop() {
    if (stopping_.exchange(true)) return;
    acceptor_.join();
    close(listen_fd_);
    for (auto& t : pumps_) t.join();
  }
  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }

 private:
  struct Connection {
    std::mutex mu;
    std::ofstream out;
    int fds[2] = {-1, -1};  // client side, server side
    std::atomic<int> open_directions{2};
  };

  void accept_loop() {
    int n = 0;
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a = loopback(upstream_);
      if (connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(client);
        close(server);
        continue;
      }
      const int one = 1;  // forward each read at once, as the endpoints wrote it
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_shared<Connection>();
      {
        std::lock_guard<std::mutex> lock(mu_);
        c->out.open(prefix_ + "-" + std::to_string(n++) + ".cap", std::ios::binary | std::ios::trunc);
      }
      c->fds[0] = client;
      c->fds[1] = server;
      pumps_.emplace_back([this, c] { pump(c, 0); });
      pumps_.emplace_back([this, c] { pump(c, 1); });
    }
  }

  void pump(std::shared_ptr<Connection> c, int direction) {
    const int from = c->fds[direction];
    const int to = c->fds[1 - direction];
    std::vector<char> buf(read_size_);
    for (;;) {
      const ssize_t got = read(from, buf.data(), buf.size());
      const std::uint64_t ts = monotonic_ns();
      if (got <= 0) break;
      {
        std::lock_guard<std::mutex> lock(c->mu);
        const auto len = static_cast<std::uint32_t>(got);
        char header[17];
        header[0] = static_cast<char>(direction);
        for (int i = 0; i < 4; ++i) header[1 + i] = header[5 + i] = static_cast<char>(len >> (8 * i));
        for (int i = 0; i < 8; ++i) header[9 + i] = static_cast<char>(ts >> (8 * i));
        c->out.write(header, sizeof header);
        c->out.write(buf.data(), got);
      }
      for (ssize_t off = 0; off < got;) {
        const ssize_t w = write(to, buf.data() + off, static_cast<std::size_t>(got - off));
        if (w <= 0) break;
        off += w;
      }
    }
    shutdown(to, SHUT_WR);
    if (--c->open_directions == 0) {
      close(c->fds[0]);
      close(c->fds[1]);
      std::lock_guard<std::mutex> lock(c->mu);
      c->out.close();
    }
  }

  std::uint16_t upstream_;
  std::string prefix_;
  std::size_t read_size_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> pumps_;
};

}  // namespace skewscope::tools
