// Measured workloads for bench/overhead and bench/overload (lab_traffic drives traffic; this one
// also times it). Every mode is bounded by --count and/or --duration and prints one line of
// key=value fields, starting with the mode:
//   rr-server      accept one connection; read exactly --size bytes, write them back, until EOF
//   rr-client      --count request/response round trips: rate, latency percentiles, own CPU
//   stream-sink    accept one connection; read until EOF: messages (bytes / --size), rate
//   stream-source  write --count messages of --size bytes as fast as possible
//   zmq-pull       bind PULL, receive --count messages (or until --duration, or 1 s idle): rate
//   zmq-push       connect PUSH, send --count messages of --size bytes
//   syscalls       --count non-socket syscalls (write to /dev/null, read from /dev/zero, a pipe
//                  round trip, write() to a file, or pwrite() to a file, which no probe hooks):
//                  ns per syscall, the filter cost with an agent
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "tcp_endpoint.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace skewscope::tools;
using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};
long g_writes = 0;  // write() calls that moved bytes: each is one send half for the agent
constexpr long kMaxCount = 50'000'000;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Waits (bounded by duration) for one connection.
int accept_one(const std::string& endpoint, double duration) {
  sockaddr_in addr = parse_endpoint(endpoint);
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(lfd, 4) != 0)
    throw std::runtime_error("cannot listen on " + endpoint + ": " + std::strerror(errno));
  auto start = Clock::now();
  while (!g_stop && seconds_since(start) < duration) {
    pollfd p{lfd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      int fd = accept(lfd, nullptr, nullptr);
      close(lfd);
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
  }
  throw std::runtime_error("no connection on " + endpoint);
}

struct Options {
  std::string endpoint;
  std::size_t size = 64;
  long count = 0;
  double duration = 0;
  std::string op = "write-devnull";
  std::string path = "/tmp/bench_traffic.io";
};

bool more(const Options& o, long i, Clock::time_point start) {
  if (g_stop || i >= o.count) return false;
  return o.duration <= 0 || (i & 255) != 0 || seconds_since(start) < o.duration;
}

void rr_server(const Options& o) {
  int fd = accept_one(o.endpoint, o.duration);
  std::vector<char> buf(o.size);
  long n = 0;
  while (!g_stop && read_exact(fd, buf.data(), o.size) && write_all(fd, buf.data(), o.size, &g_writes)) ++n;
  close(fd);
  std::printf("rr-server round_trips=%ld cpu_s=%.6f\n", n, cpu_seconds());
}

void rr_client(const Options& o) {
  int fd = connect_to(o.endpoint, 10, &g_stop);
  std::vector<char> out(o.size, 'p'), in(o.size);
  std::vector<float> rtt_us;
  rtt_us.reserve(static_cast<std::size_t>(o.count));
  const double cpu0 = cpu_seconds();
  auto start = Clock::now();
  long i = 0;
  for (; more(o, i, start); ++i) {
    auto t0 = Clock::now();
    if (!write_all(fd, out.data(), o.size, &g_writes) || !read_exact(fd, in.data(), o.size)) break;
    rtt_us.push_back(static_cast<float>(std::chrono::duration<double, std::micro>(Clock::now() - t0).count()));
  }
  const double elapsed = seconds_since(start), cpu = cpu_seconds() - cpu0;
  close(fd);
  if (rtt_us.empty()) throw std::runtime_error("no round trip completed");
  auto pct = [&](double p) {
    auto k = static_cast<std::size_t>(p * static_cast<double>(rtt_us.size() - 1));
    std::nth_element(rtt_us.begin(), rtt_us.begin() + static_cast<long>(k), rtt_us.end());
    return rtt_us[k];
  };
  const double p50 = pct(0.5), p99 = pct(0.99), p999 = pct(0.999);
  std::printf("rr-client round_trips=%ld messages=%ld seconds=%.6f msgs_per_s=%.1f p50_us=%.2f p99_us=%.2f "
              "p999_us=%.2f cpu_s=%.6f\n",
              i, 2 * i, elapsed, 2.0 * static_cast<double>(i) / elapsed, p50, p99, p999, cpu);
}

void stream_sink(const Options& o) {
  int fd = accept_one(o.endpoint, o.duration);
  std::vector<char> buf(std::max<std::size_t>(o.size, 1));
  std::size_t bytes = 0;
  long reads = 0;
  Clock::time_point first{};
  Clock::time_point last{};
  auto start = Clock::now();
  while (!g_stop && seconds_since(start) < o.duration) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t r = read(fd, buf.data(), buf.size());
    if (r <= 0) break;
    if (bytes == 0) first = Clock::now();
    bytes += static_cast<std::size_t>(r);
    ++reads;
    last = Clock::now();
  }
  close(fd);
  const double secs = std::chrono::duration<double>(last - first).count();
  const double messages = static_cast<double>(bytes) / static_cast<double>(o.size);
  std::printf("stream-sink messages=%.0f bytes=%zu reads=%ld seconds=%.6f msgs_per_s=%.1f cpu_s=%.6f\n", messages,
              bytes, reads, secs, secs > 0 ? messages / secs : 0.0, cpu_seconds());
}

void stream_source(const Options& o) {
  int fd = connect_to(o.endpoint, 10, &g_stop);
  std::vector<char> buf(o.size, 'x');
  auto start = Clock::now();
  long i = 0;
  for (; more(o, i, start); ++i)
    if (!write_all(fd, buf.data(), o.size, &g_writes)) break;
  const double elapsed = seconds_since(start);
  close(fd);
  std::printf("stream-source messages=%ld writes=%ld seconds=%.6f msgs_per_s=%.1f cpu_s=%.6f\n", i, g_writes, elapsed,
              static_cast<double>(i) / elapsed, cpu_seconds());
}

void zmq_pull(const Options& o) {
  void* ctx = zmq_ctx_new();
  void* sock = zmq_socket(ctx, ZMQ_PULL);
  if (zmq_bind(sock, o.endpoint.c_str()) != 0) throw std::runtime_error("zmq_bind " + o.endpoint);
  int timeout = 100;
  zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  std::vector<char> buf(std::max<std::size_t>(o.size, 1) + 64);
  long n = 0;
  Clock::time_point first{}, last{};
  auto start = Clock::now();
  // Ends at --count, at --duration, or 1 s after the last message (the pusher has finished).
  while (!g_stop && n < o.count && seconds_since(start) < o.duration) {
    if (zmq_recv(sock, buf.data(), buf.size(), 0) < 0) {
      if (n > 0 && seconds_since(last) > 1.0) break;
      continue;
    }
    if (n == 0) first = Clock::now();
    ++n;
    last = Clock::now();
  }
  const double secs = std::chrono::duration<double>(last - first).count();
  std::printf("zmq-pull messages=%ld seconds=%.6f msgs_per_s=%.1f cpu_s=%.6f\n", n, secs,
              secs > 0 ? static_cast<double>(n - 1) / secs : 0.0, cpu_seconds());
  zmq_close(sock);
  zmq_ctx_term(ctx);
}

void zmq_push(const Options& o) {
  void* ctx = zmq_ctx_new();
  void* sock = zmq_socket(ctx, ZMQ_PUSH);
  int linger = 5000;
  zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(sock, o.endpoint.c_str()) != 0) throw std::runtime_error("zmq_connect " + o.endpoint);
  std::vector<char> buf(o.size, 'z');
  auto start = Clock::now();
  long i = 0;
  for (; more(o, i, start); ++i)
    if (zmq_send(sock, buf.data(), buf.size(), 0) < 0) break;
  const double elapsed = seconds_since(start);
  std::printf("zmq-push messages=%ld seconds=%.6f cpu_s=%.6f\n", i, elapsed, cpu_seconds());
  zmq_close(sock);
  zmq_ctx_term(ctx);
}

// Non-socket reads and writes: every one passes the agent's syscall tracepoints, which must
// reject it (fd is not a TCP socket) as cheaply as possible.
void syscalls(const Options& o) {
  std::vector<char> buf(o.size, 's');
  int a = -1, b = -1;
  int per_iteration = 1;
  if (o.op == "write-devnull") {
    a = open("/dev/null", O_WRONLY | O_CLOEXEC);
  } else if (o.op == "read-devzero") {
    a = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  } else if (o.op == "pipe") {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    b = p[0];
    a = p[1];
    per_iteration = 2;  // write then read back
  } else if (o.op == "write-file" || o.op == "pwrite-file") {
    a = open(o.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  } else {
    throw std::runtime_error("--op must be write-devnull, read-devzero, pipe, write-file or pwrite-file");
  }
  if (a < 0) throw std::runtime_error("open: " + std::string(std::strerror(errno)));
  const double cpu0 = cpu_seconds();
  auto start = Clock::now();
  long i = 0;
  // The fastest batch of 128 iterations: on a shared machine most batches run without being
  // preempted, so the minimum is the call's own cost, which a whole-run average is not.
  constexpr long kBatch = 128;
  double best_batch_ns = 0;
  auto batch_start = start;
  for (; more(o, i, start); ++i) {
    if (i % kBatch == 0 && i > 0) {
      auto now = Clock::now();
      double ns = std::chrono::duration<double, std::nano>(now - batch_start).count();
      if (best_batch_ns == 0 || ns < best_batch_ns) best_batch_ns = ns;
      batch_start = now;
    }
    if (o.op == "read-devzero") {
      if (read(a, buf.data(), o.size) <= 0) break;
    } else if (o.op == "pipe") {
      if (write(a, buf.data(), o.size) <= 0 || read(b, buf.data(), o.size) <= 0) break;
    } else if (o.op == "pwrite-file") {  // pwrite64 is not hooked: the control
      if (pwrite(a, buf.data(), o.size, static_cast<off_t>((static_cast<std::size_t>(i) * o.size) & 0xfffff)) <= 0) break;
    } else if (o.op == "write-file") {  // rewinds every 1 MiB (one lseek per 16384 writes of 64 B)
      if ((static_cast<std::size_t>(i) * o.size & 0xfffff) < o.size && i > 0) lseek(a, 0, SEEK_SET);
      if (write(a, buf.data(), o.size) <= 0) break;
    } else {
      if (write(a, buf.data(), o.size) <= 0) break;
    }
  }
  const double elapsed = seconds_since(start), cpu = cpu_seconds() - cpu0;
  const long calls = i * per_iteration;
  close(a);
  if (b >= 0) close(b);
  if (o.op == "write-file" || o.op == "pwrite-file") unlink(o.path.c_str());
  std::printf("syscalls op=%s calls=%ld seconds=%.6f ns_per_call=%.2f cpu_ns_per_call=%.2f min_batch_ns_per_call=%.2f\n",
              o.op.c_str(), calls, elapsed, elapsed * 1e9 / static_cast<double>(calls),
              cpu * 1e9 / static_cast<double>(calls), best_batch_ns / static_cast<double>(kBatch * per_iteration));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"measured workloads for skewscope's benchmarks"};
  app.require_subcommand(1);
  Options o;
  auto add = [&](const char* name, const char* endpoint_flag) {
    auto* c = app.add_subcommand(name);
    if (endpoint_flag) c->add_option(endpoint_flag, o.endpoint)->required();
    c->add_option("--size", o.size, "message bytes")->check(CLI::Range(1, 1 << 20));
    c->add_option("--count", o.count, "messages (upper bound)")->check(CLI::Range(1L, kMaxCount));
    c->add_option("--duration", o.duration, "seconds (upper bound)")->check(CLI::Range(0.0, 600.0));
    return c;
  };
  auto* rs = add("rr-server", "--listen");
  auto* rc = add("rr-client", "--connect");
  auto* sk = add("stream-sink", "--listen");
  auto* so = add("stream-source", "--connect");
  auto* zl = add("zmq-pull", "--bind");
  auto* zp = add("zmq-push", "--connect");
  auto* sc = add("syscalls", nullptr);
  sc->add_option("--op", o.op, "write-devnull | read-devzero | pipe | write-file | pwrite-file");
  sc->add_option("--path", o.path, "file for --op file (removed afterwards)");
  CLI11_PARSE(app, argc, argv);
  // Servers and sinks wait for their peer: they need a duration. Senders need a count.
  if ((rs->parsed() || sk->parsed() || zl->parsed()) && o.duration <= 0) o.duration = 60;
  if ((rc->parsed() || so->parsed() || zp->parsed() || sc->parsed()) && o.count <= 0) {
    std::cerr << "bench_traffic: give --count\n";
    return 2;
  }
  if (zl->parsed() && o.count <= 0) o.count = kMaxCount;
  signal(SIGTERM, [](int) { g_stop = true; });
  signal(SIGINT, [](int) { g_stop = true; });
  signal(SIGPIPE, SIG_IGN);
  try {
    if (rs->parsed()) rr_server(o);
    if (rc->parsed()) rr_client(o);
    if (sk->parsed()) stream_sink(o);
    if (so->parsed()) stream_source(o);
    if (zl->parsed()) zmq_pull(o);
    if (zp->parsed()) zmq_push(o);
    if (sc->parsed()) syscalls(o);
  } catch (const std::exception& e) {
    std::cerr << "bench_traffic: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
