// Timed workloads for bench/overhead and bench/overload. Each prints one line of key=value fields
// after the mode's name (the scripts parse them by key):
//   rr-server      accept one connection; read exactly --size bytes, write them back, until EOF
//   rr-client      request/response round trips: rate, latency percentiles, own CPU
//   stream-sink    accept one connection; read until EOF: messages (bytes / --size), rate
//   stream-source  write messages of --size bytes as fast as possible
//   syscalls       non-socket syscalls (write to /dev/null, read from /dev/zero, a pipe round
//                  trip, write() to a file, or pwrite() to a file, which no probe hooks):
//                  ns per syscall, the cost of the agent's filter for what it does not trace
#include "tcp_endpoint.hpp"
#include "traffic.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace skewscope::traffic {
namespace {

using tools::connect_to;
using tools::read_exact;
using tools::write_all;

long g_writes = 0;  // write() calls that moved bytes: each is one send half for the agent

void rr_server(const Options& o) {
  int fd = accept_one(o.endpoint, o.bounds.duration);
  std::vector<char> buf(o.size);
  long n = 0;
  while (!g_stop && read_exact(fd, buf.data(), o.size) && write_all(fd, buf.data(), o.size, &g_writes)) ++n;
  close(fd);
  std::printf("rr-server round_trips=%ld cpu_s=%.6f\n", n, cpu_seconds());
}

void rr_client(Options o) {
  int fd = connect_to(o.endpoint, 10, &g_stop);
  std::vector<char> out(o.size, 'p'), in(o.size);
  std::vector<float> rtt_us;
  rtt_us.reserve(static_cast<std::size_t>(std::clamp(o.bounds.count, 1024L, 1L << 22)));
  const double cpu0 = cpu_seconds();
  o.bounds.restart();
  long i = 0;
  for (; o.bounds.next(i); ++i) {
    auto t0 = Clock::now();
    if (!write_all(fd, out.data(), o.size, &g_writes) || !read_exact(fd, in.data(), o.size)) break;
    rtt_us.push_back(static_cast<float>(std::chrono::duration<double, std::micro>(Clock::now() - t0).count()));
  }
  const double elapsed = seconds_since(o.bounds.start), cpu = cpu_seconds() - cpu0;
  close(fd);
  if (rtt_us.empty()) throw std::runtime_error("no round trip completed");
  auto pct = [&](double p) {
    auto k = static_cast<std::size_t>(p * static_cast<double>(rtt_us.size() - 1));
    std::nth_element(rtt_us.begin(), rtt_us.begin() + static_cast<long>(k), rtt_us.end());
    return rtt_us[k];
  };
  const double p50 = pct(0.5), p99 = pct(0.99), p999 = pct(0.999);
  std::printf(
      "rr-client round_trips=%ld messages=%ld seconds=%.6f msgs_per_s=%.1f p50_us=%.2f p99_us=%.2f "
      "p999_us=%.2f cpu_s=%.6f\n",
      i, 2 * i, elapsed, 2.0 * static_cast<double>(i) / elapsed, p50, p99, p999, cpu);
}

void stream_sink(const Options& o) {
  auto start = Clock::now();
  int fd = accept_one(o.endpoint, o.bounds.duration);
  std::vector<char> buf(o.size);
  std::size_t bytes = 0;
  long reads = 0;
  Clock::time_point first{}, last{};
  while (!g_stop && seconds_since(start) < o.bounds.duration) {
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

void stream_source(Options o) {
  int fd = connect_to(o.endpoint, 10, &g_stop);
  std::vector<char> buf(o.size, 'x');
  o.bounds.restart();
  long i = 0;
  for (; o.bounds.next(i); ++i)
    if (!write_all(fd, buf.data(), o.size, &g_writes)) break;
  const double elapsed = seconds_since(o.bounds.start);
  close(fd);
  std::printf("stream-source messages=%ld writes=%ld seconds=%.6f msgs_per_s=%.1f cpu_s=%.6f\n", i, g_writes, elapsed,
              static_cast<double>(i) / elapsed, cpu_seconds());
}

// Non-socket reads and writes: every one passes the agent's syscall tracepoints, which must
// reject it (fd is not a TCP socket) as cheaply as possible.
void syscalls(Options o) {
  std::vector<char> buf(o.size, 's');
  int a = -1, b = -1;
  int per_iteration = 1;
  if (o.op == "write-devnull") {
    a = open("/dev/null", O_WRONLY | O_CLOEXEC);
  } else if (o.op == "read-devzero") {
    a = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  } else if (o.op == "pipe") {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
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
  o.bounds.restart();
  long i = 0;
  // The fastest batch of 128 iterations: on a shared machine most batches run without being
  // preempted, so the minimum is the call's own cost, which a whole-run average is not.
  constexpr long kBatch = 128;
  double best_batch_ns = 0;
  auto batch_start = o.bounds.start;
  for (; o.bounds.next(i); ++i) {
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
      if (pwrite(a, buf.data(), o.size, static_cast<off_t>((static_cast<std::size_t>(i) * o.size) & 0xfffff)) <= 0)
        break;
    } else if (o.op == "write-file") {  // rewinds every 1 MiB (one lseek per 16384 writes of 64 B)
      if ((static_cast<std::size_t>(i) * o.size & 0xfffff) < o.size && i > 0) lseek(a, 0, SEEK_SET);
      if (write(a, buf.data(), o.size) <= 0) break;
    } else {
      if (write(a, buf.data(), o.size) <= 0) break;
    }
  }
  const double elapsed = seconds_since(o.bounds.start), cpu = cpu_seconds() - cpu0;
  const long calls = i * per_iteration;
  close(a);
  if (b >= 0) close(b);
  if (o.op == "write-file" || o.op == "pwrite-file") unlink(o.path.c_str());
  if (calls == 0) throw std::runtime_error("no syscall completed");
  std::printf(
      "syscalls op=%s calls=%ld seconds=%.6f ns_per_call=%.2f cpu_ns_per_call=%.2f min_batch_ns_per_call=%.2f\n",
      o.op.c_str(), calls, elapsed, elapsed * 1e9 / static_cast<double>(calls), cpu * 1e9 / static_cast<double>(calls),
      best_batch_ns / static_cast<double>(kBatch * per_iteration));
}

}  // namespace

void add_measured_modes(CLI::App& app, Options& o, std::vector<Mode>& modes) {
  auto add = [&](const char* name, const char* what, const char* endpoint_flag, Needs needs, auto run) {
    auto* command = app.add_subcommand(name, what);
    if (endpoint_flag) command->add_option(endpoint_flag, o.endpoint, "ADDR:PORT")->required();
    add_size(command, o);
    if (needs == Needs::kDurationOrDefault)
      add_receive_duration(command, o);
    else
      add_bounds(command, o, false);
    modes.push_back({command, needs, [&o, run] { run(o); }});
    return command;
  };
  add("rr-server", "echo --size-byte requests, one connection", "--listen", Needs::kDurationOrDefault, rr_server);
  add("rr-client", "timed request/response round trips", "--connect", Needs::kCountOrDuration, rr_client);
  add("stream-sink", "read one connection until EOF, timed", "--listen", Needs::kDurationOrDefault, stream_sink);
  add("stream-source", "write --size-byte messages as fast as possible", "--connect", Needs::kCountOrDuration,
      stream_source);
  auto* sc =
      add("syscalls", "time non-socket syscalls (the agent's filter cost)", nullptr, Needs::kCountOrDuration, syscalls);
  sc->add_option("--op", o.op, "write-devnull | read-devzero | pipe | write-file | pwrite-file");
  sc->add_option("--path", o.path, "file for the *-file ops (removed afterwards)");
}

}  // namespace skewscope::traffic
