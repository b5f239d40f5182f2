// Real traffic for tests, the demo and benchmarks, between lab hosts (network namespaces):
//   tcp-sink      accept connections and read with a cycle of read sizes (e.g. 4,8,3)
//   tcp-source    connect and write with a cycle of write sizes (e.g. 5,7,3)
//   echo-server   echo every byte back (request/response traffic in both directions)
//   ping          send fixed-size requests, wait for each echo
//   zmq-pull      bind a ZeroMQ PULL socket and receive
//   zmq-push      connect a PUSH socket and send
// Every mode is bounded (--count or --duration) and prints one summary line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "tcp_endpoint.hpp"

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

namespace {

using namespace skewscope::tools;
using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t n = std::stoul(item);
    if (n == 0 || n > (1 << 20)) throw std::runtime_error("sizes must be 1..1048576");
    sizes.push_back(n);
  }
  if (sizes.empty()) throw std::runtime_error("no sizes given");
  return sizes;
}

int listen_on(const std::string& endpoint) {
  sockaddr_in addr = parse_endpoint(endpoint);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 16) != 0)
    throw std::runtime_error("cannot listen on " + endpoint + ": " + std::strerror(errno));
  return fd;
}

// Paces a loop at `rate` per second (0: as fast as possible) and bounds it by count/duration.
struct Pace {
  double rate;
  long count;
  double duration;
  Clock::time_point start = Clock::now();
  bool next(long i) {
    if (g_stop || (count > 0 && i >= count)) return false;
    auto elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (duration > 0 && elapsed >= duration) return false;
    if (rate > 0) std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                            std::chrono::duration<double>(i / rate)));
    return true;
  }
};

bool wait_readable(int fd, double duration_s, Clock::time_point start) {
  while (!g_stop) {
    if (duration_s > 0 && std::chrono::duration<double>(Clock::now() - start).count() > duration_s) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) return true;
  }
  return false;
}

void tcp_sink(const std::string& endpoint, const std::string& read_sizes, double duration) {
  auto sizes = parse_sizes(read_sizes);
  int lfd = listen_on(endpoint);
  auto start = Clock::now();
  std::size_t total = 0, reads = 0;
  if (!wait_readable(lfd, duration, start)) throw std::runtime_error("no connection");
  int fd = accept(lfd, nullptr, nullptr);
  std::vector<char> buf(1 << 20);
  for (std::size_t i = 0; wait_readable(fd, duration, start); ++i) {
    ssize_t r = read(fd, buf.data(), sizes[i % sizes.size()]);
    if (r <= 0) break;
    total += static_cast<std::size_t>(r);
    ++reads;
  }
  std::cout << "tcp-sink: " << reads << " reads, " << total << " bytes" << std::endl;
}

void tcp_source(const std::string& endpoint, const std::string& write_sizes, Pace pace) {
  auto sizes = parse_sizes(write_sizes);
  int fd = connect_to(endpoint, 10);
  std::vector<char> buf(1 << 20, 'x');
  long i = 0;
  std::size_t total = 0;
  pace.start = Clock::now();
  for (; pace.next(i); ++i) {
    std::size_t n = sizes[static_cast<std::size_t>(i) % sizes.size()];
    if (!write_all(fd, buf.data(), n)) break;
    total += n;
  }
  close(fd);
  std::cout << "tcp-source: " << i << " writes, " << total << " bytes" << std::endl;
}

void echo_server(const std::string& endpoint, double duration) {
  int lfd = listen_on(endpoint);
  auto start = Clock::now();
  std::size_t total = 0;
  if (!wait_readable(lfd, duration, start)) throw std::runtime_error("no connection");
  int fd = accept(lfd, nullptr, nullptr);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::vector<char> buf(1 << 16);
  while (wait_readable(fd, duration, start)) {
    ssize_t r = read(fd, buf.data(), buf.size());
    if (r <= 0 || !write_all(fd, buf.data(), static_cast<std::size_t>(r))) break;
    total += static_cast<std::size_t>(r);
  }
  std::cout << "echo-server: " << total << " bytes echoed" << std::endl;
}

void ping(const std::string& endpoint, std::size_t size, Pace pace) {
  int fd = connect_to(endpoint, 10);
  std::vector<char> out(size, 'p'), in(size);
  long i = 0;
  double min_rtt = 1e9;
  pace.start = Clock::now();
  for (; pace.next(i); ++i) {
    auto t0 = Clock::now();
    if (!write_all(fd, out.data(), size) || !read_exact(fd, in.data(), size)) break;
    min_rtt = std::min(min_rtt, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  close(fd);
  std::cout << "ping: " << i << " round trips, min rtt " << min_rtt * 1e6 << " us" << std::endl;
}

void zmq_pull(const std::string& endpoint, double duration) {
  void* ctx = zmq_ctx_new();
  void* sock = zmq_socket(ctx, ZMQ_PULL);
  if (zmq_bind(sock, endpoint.c_str()) != 0) throw std::runtime_error("zmq_bind " + endpoint + ": " + zmq_strerror(errno));
  int timeout = 100;
  zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  auto start = Clock::now();
  long messages = 0;
  std::vector<char> buf(1 << 20);
  while (!g_stop && (duration <= 0 || std::chrono::duration<double>(Clock::now() - start).count() < duration)) {
    if (zmq_recv(sock, buf.data(), buf.size(), 0) >= 0) ++messages;
  }
  std::cout << "zmq-pull: " << messages << " messages" << std::endl;
  zmq_close(sock);
  zmq_ctx_term(ctx);
}

void zmq_push(const std::string& endpoint, std::size_t size, Pace pace) {
  void* ctx = zmq_ctx_new();
  void* sock = zmq_socket(ctx, ZMQ_PUSH);
  int linger = 2000;
  zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(sock, endpoint.c_str()) != 0) throw std::runtime_error("zmq_connect " + endpoint);
  std::vector<char> buf(size, 'z');
  long i = 0;
  pace.start = Clock::now();
  for (; pace.next(i); ++i) zmq_send(sock, buf.data(), buf.size(), 0);
  std::cout << "zmq-push: " << i << " messages" << std::endl;
  zmq_close(sock);
  zmq_ctx_term(ctx);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lab traffic for skewscope tests"};
  app.require_subcommand(1);
  std::string endpoint, sizes = "1024";
  double rate = 0, duration = 0;
  long count = 0;
  std::size_t size = 64;
  auto bounded = [&](CLI::App* c) {
    c->add_option("--rate", rate, "messages per second (0: as fast as possible)");
    c->add_option("--count", count, "messages to send");
    c->add_option("--duration", duration, "seconds to run");
  };
  auto* sink = app.add_subcommand("tcp-sink");
  sink->add_option("--listen", endpoint)->required();
  sink->add_option("--read-sizes", sizes);
  sink->add_option("--duration", duration);
  auto* source = app.add_subcommand("tcp-source");
  source->add_option("--connect", endpoint)->required();
  source->add_option("--write-sizes", sizes);
  bounded(source);
  auto* echo = app.add_subcommand("echo-server");
  echo->add_option("--listen", endpoint)->required();
  echo->add_option("--duration", duration);
  auto* pinger = app.add_subcommand("ping");
  pinger->add_option("--connect", endpoint)->required();
  pinger->add_option("--size", size);
  bounded(pinger);
  auto* pull = app.add_subcommand("zmq-pull");
  pull->add_option("--bind", endpoint)->required();
  pull->add_option("--duration", duration);
  auto* push = app.add_subcommand("zmq-push");
  push->add_option("--connect", endpoint)->required();
  push->add_option("--size", size);
  bounded(push);
  CLI11_PARSE(app, argc, argv);
  if (count <= 0 && duration <= 0 && (source->parsed() || pinger->parsed() || push->parsed())) {
    std::cerr << "lab_traffic: give --count or --duration\n";
    return 2;
  }
  signal(SIGTERM, [](int) { g_stop = true; });
  signal(SIGINT, [](int) { g_stop = true; });
  signal(SIGPIPE, SIG_IGN);
  try {
    Pace pace{rate, count, duration};
    if (sink->parsed()) tcp_sink(endpoint, sizes, duration);
    if (source->parsed()) tcp_source(endpoint, sizes, pace);
    if (echo->parsed()) echo_server(endpoint, duration);
    if (pinger->parsed()) ping(endpoint, size, pace);
    if (pull->parsed()) zmq_pull(endpoint, duration);
    if (push->parsed()) zmq_push(endpoint, size, pace);
  } catch (const std::exception& e) {
    std::cerr << "lab_traffic: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
