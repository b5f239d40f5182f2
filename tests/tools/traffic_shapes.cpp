// Traffic shapes that real services have and simpler modes do not:
//   reply-close-server  accept connections one after another: read the request, send the reply,
//                       close (HTTP/1.0, short RPCs); with --reset the close sends a reset (RST)
//                       right behind the reply instead of a FIN (SO_LINGER 0: an aborting server)
//   reply-close-client  per connection: connect, send the request, pause, read until EOF, so that
//                       the reply and the server's FIN are read by one call; many connections in
//                       a row are the churn
//   slow-sink           accept one connection with a small receive buffer, read it slowly
//   blocking-source     large writes behind a small send buffer: each write() blocks until the
//                       slow peer has read most of it; reports how long the shortest one blocked
//                       (with --timeout-ms, SO_SNDTIMEO cuts them short: "whole" counts the rest);
//                       --call writev/sendto/sendmsg makes the same send with that call (the
//                       vector calls split it over two iovecs)
// Each side counts what it moved, so a test can compare the agent's spans with exact numbers.
#include "tcp_endpoint.hpp"
#include "traffic.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace skewscope::traffic {
namespace {

using tools::connect_to;
using tools::read_exact;
using tools::write_all;

constexpr std::size_t kMaxBlockingWrite = std::size_t{64} << 20;

void pause_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

void set_buffer(int fd, int option, std::size_t bytes) {
  if (bytes == 0) return;
  int value = static_cast<int>(bytes);
  if (setsockopt(fd, SOL_SOCKET, option, &value, sizeof value) != 0)
    throw std::runtime_error(std::string("setsockopt buffer size: ") + std::strerror(errno));
}

// One connection at a time, as a forking HTTP/1.0 server's child would: the reply leaves with
// the FIN right behind it.
void reply_close_server(const Options& o) {
  const auto start = Clock::now();
  int lfd = listen_on(o.endpoint, 128);
  std::vector<char> request(o.size), reply(o.size, 'r');
  long served = 0, failed = 0;
  while ((o.bounds.count <= 0 || served + failed < o.bounds.count) && wait_readable(lfd, o.bounds.duration, start)) {
    int fd = accept(lfd, nullptr, nullptr);
    if (fd < 0) continue;
    const bool ok = read_exact(fd, request.data(), o.size) && write_all(fd, reply.data(), o.size);
    if (o.reset) {
      // The reply leaves first (it is queued before the close); the reset follows it at once.
      linger abort{1, 0};
      if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort) != 0)
        throw std::runtime_error(std::string("setsockopt SO_LINGER: ") + std::strerror(errno));
    }
    close(fd);
    ++(ok ? served : failed);
  }
  close(lfd);
  std::cout << "reply-close-server: " << served << " replies, " << failed << " failed" << std::endl;
}

// Reads until EOF with one buffer larger than the reply: after the pause the reply and the FIN
// are both queued, and one read returns the reply and consumes the FIN.
void reply_close_client(Options o) {
  std::vector<char> request(o.size, 'q'), in(o.size + 4096);
  long i = 0, complete = 0;
  o.bounds.restart();
  for (; o.bounds.next(i); ++i) {
    int fd = connect_to(o.endpoint, 10, &g_stop);
    std::size_t got = 0;
    if (write_all(fd, request.data(), o.size)) {
      pause_ms(o.delay_ms);
      for (ssize_t r; (r = read(fd, in.data(), in.size())) != 0;) {
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        got += static_cast<std::size_t>(r);
      }
    }
    close(fd);
    if (got == o.size) ++complete;
  }
  std::cout << "reply-close-client: " << i << " connections, " << complete << " complete replies" << std::endl;
}

void slow_sink(const Options& o) {
  const auto start = Clock::now();
  int lfd = listen_on(o.endpoint, 4);
  set_buffer(lfd, SO_RCVBUF, o.socket_buffer);  // inherited by the accepted socket, before the handshake
  const bool ready = wait_readable(lfd, o.bounds.duration, start);
  int fd = ready ? accept(lfd, nullptr, nullptr) : -1;
  close(lfd);
  if (fd < 0) throw std::runtime_error("no connection on " + o.endpoint);
  std::vector<char> buf(o.size);
  std::size_t total = 0, reads = 0;
  while (wait_readable(fd, o.bounds.duration, start)) {
    ssize_t r = read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    total += static_cast<std::size_t>(r);
    ++reads;
    pause_ms(o.delay_ms);
  }
  close(fd);
  std::cout << "slow-sink: " << reads << " reads, " << total << " bytes" << std::endl;
}

// One call of the chosen kind moving the whole buffer; the vector calls split it over two iovecs
// of unequal size, so that a capture summing only the first would be seen.
ssize_t send_once(int fd, const std::string& call, std::vector<char>& buf) {
  const std::size_t first = buf.size() / 3;
  iovec parts[2] = {{buf.data(), first}, {buf.data() + first, buf.size() - first}};
  if (call == "writev") return writev(fd, parts, 2);
  if (call == "sendto") return sendto(fd, buf.data(), buf.size(), 0, nullptr, 0);
  if (call == "sendmsg") {
    msghdr m{};
    m.msg_iov = parts;
    m.msg_iovlen = 2;
    return sendmsg(fd, &m, 0);
  }
  return write(fd, buf.data(), buf.size());
}

// One call per message, never a retry loop: a partial write (a signal) is reported, since the
// test counts one send half per message.
void blocking_source(Options o) {
  int fd = connect_to(o.endpoint, 10, &g_stop, [&o](int s) {
    set_buffer(s, SO_SNDBUF, o.socket_buffer);
    if (o.delay_ms > 0) {  // SO_SNDTIMEO: a write that waits longer returns the bytes it queued
      timeval limit{static_cast<time_t>(o.delay_ms / 1000),
                    static_cast<suseconds_t>(std::fmod(o.delay_ms, 1000.0) * 1000)};
      if (setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0)
        throw std::runtime_error(std::string("setsockopt SO_SNDTIMEO: ") + std::strerror(errno));
    }
  });
  std::vector<char> buf(o.size, 'b');
  long i = 0, whole = 0;
  double shortest = 1e9, longest = 0;
  o.bounds.restart();
  for (; o.bounds.next(i); ++i) {
    const auto t0 = Clock::now();
    ssize_t w = send_once(fd, o.call, buf);
    const double blocked = seconds_since(t0);
    if (w < 0) break;
    if (static_cast<std::size_t>(w) == o.size) ++whole;
    shortest = std::min(shortest, blocked);
    longest = std::max(longest, blocked);
  }
  close(fd);
  std::cout << "blocking-source: " << i << " writes, " << whole << " whole, blocked " << shortest << " s to " << longest
            << " s" << std::endl;
}

}  // namespace

void add_shape_modes(CLI::App& app, Options& o, std::vector<Mode>& modes) {
  auto* server = app.add_subcommand("reply-close-server", "per connection: read the request, reply, close");
  server->add_option("--listen", o.endpoint, "ADDR:PORT or [ADDR%IFACE]:PORT")->required();
  add_size(server, o);
  server->add_option("--count", o.bounds.count, "connections to serve (upper bound)")->check(CLI::Range(1L, kMaxCount));
  server->add_flag("--reset", o.reset, "close with a reset (SO_LINGER 0) right behind the reply");
  add_receive_duration(server, o);
  modes.push_back({server, Needs::kDurationOrDefault, [&o] { reply_close_server(o); }});

  auto* client = app.add_subcommand("reply-close-client", "per connection: request, pause, read reply and FIN");
  client->add_option("--connect", o.endpoint, "ADDR:PORT or [ADDR%IFACE]:PORT")->required();
  add_size(client, o);
  client->add_option("--delay-ms", o.delay_ms, "pause before reading the reply")->check(CLI::Range(0.0, 10000.0));
  add_bounds(client, o, true);
  modes.push_back({client, Needs::kCountOrDuration, [&o] { reply_close_client(o); }});

  auto* sink = app.add_subcommand("slow-sink", "accept one connection, read --size bytes per --delay-ms");
  sink->add_option("--listen", o.endpoint, "ADDR:PORT or [ADDR%IFACE]:PORT")->required();
  add_size(sink, o);
  sink->add_option("--delay-ms", o.delay_ms, "pause after each read")->check(CLI::Range(0.0, 10000.0));
  sink->add_option("--rcvbuf", o.socket_buffer, "SO_RCVBUF bytes")->check(CLI::Range(std::size_t{1}, kMaxMessage));
  add_receive_duration(sink, o);
  modes.push_back({sink, Needs::kDurationOrDefault, [&o] { slow_sink(o); }});

  auto* source = app.add_subcommand("blocking-source", "one write() of --bytes per message, behind a small buffer");
  source->add_option("--connect", o.endpoint, "ADDR:PORT or [ADDR%IFACE]:PORT")->required();
  source->add_option("--bytes", o.size, "bytes per write")->check(CLI::Range(std::size_t{1}, kMaxBlockingWrite));
  source->add_option("--sndbuf", o.socket_buffer, "SO_SNDBUF bytes")->check(CLI::Range(std::size_t{1}, kMaxMessage));
  source->add_option("--timeout-ms", o.delay_ms, "SO_SNDTIMEO: a write waiting longer returns short")
      ->check(CLI::Range(1.0, 60000.0));
  source->add_option("--call", o.call, "the send call: write, writev, sendto or sendmsg")
      ->check(CLI::IsMember({"write", "writev", "sendto", "sendmsg"}));
  add_bounds(source, o, false);
  modes.push_back({source, Needs::kCountOrDuration, [&o] { blocking_source(o); }});
}

}  // namespace skewscope::traffic
