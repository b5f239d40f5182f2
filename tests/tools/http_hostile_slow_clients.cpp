// The slow clients' poll loop and reconnect rules (see http_hostile_slow_clients.hpp).
#include "http_hostile_slow_clients.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "http_hostile_net.hpp"

namespace http_hostile {

SlowClients::SlowClients(const sockaddr_in& target, int count, int sources) : target_(target) {
  for (int i = 0; i < count; ++i)
    clients_.push_back({-1, static_cast<Kind>(i % kinds), "127.0.1." + std::to_string(1 + i % sources), false, 0});
}

SlowClients::~SlowClients() {
  for (auto& c : clients_)
    if (c.fd >= 0) close(c.fd);
}

void SlowClients::run(const std::atomic<bool>& stop) {
  for (auto& c : clients_) open(c);
  auto next_trickle = Clock::now();
  while (!stop) {
    std::vector<pollfd> fds;
    for (auto& c : clients_) {
      short events = c.connected ? (c.kind == slow_reader ? POLLRDHUP : POLLIN | POLLRDHUP) : POLLOUT;
      fds.push_back({c.fd, events, 0});
    }
    poll(fds.data(), fds.size(), 50);
    for (std::size_t i = 0; i < clients_.size(); ++i) handle(clients_[i], fds[i].revents);
    if (Clock::now() >= next_trickle) {
      next_trickle += std::chrono::seconds(1);
      for (auto& c : clients_)
        if (c.connected && c.kind == trickle) send(c.fd, "a", 1, MSG_NOSIGNAL);
    }
    int n = 0;
    for (auto& c : clients_) n += c.connected ? 1 : 0;
    connected = n;
  }
}

void SlowClients::open(Client& c) {
  c.connected = false;
  c.fd = start_connect(target_, c.source);
  if (c.fd < 0) ++connect_failures;
}

void SlowClients::handle(Client& c, short revents) {
  if (c.fd < 0) {  // the server refuses connections (gone or stopping): retry slowly
    if (++c.failures % 20 == 0) open(c);
    return;
  }
  if (revents == 0) return;
  if (!c.connected) {
    int error = 0;
    socklen_t len = sizeof error;
    getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) return reopen(c, false);
    c.connected = true;
    if (c.kind == slow_reader) {
      int small = 1024;
      setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
      const std::string r = "GET /metrics HTTP/1.1\r\nHost: agent\r\n\r\n";
      send(c.fd, r.data(), r.size(), MSG_NOSIGNAL);
    } else if (c.kind == partial) {
      send(c.fd, "GET /metrics HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL);
    } else if (c.kind == trickle) {
      send(c.fd, "GET /metrics HTTP/1.1\r\nX-Trickle: ", 34, MSG_NOSIGNAL);
    }
    return;
  }
  if (revents & (POLLRDHUP | POLLHUP | POLLERR)) return reopen(c, true);
  char buf[4096];
  ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN)) reopen(c, true);
}

void SlowClients::reopen(Client& c, bool by_server) {
  close(c.fd);
  c.fd = -1;
  c.connected = false;
  if (!by_server) {
    ++connect_failures;  // retried by handle() about a second later, not in a tight loop
    return;
  }
  ++cut_by_server;
  open(c);
}

}  // namespace http_hostile
