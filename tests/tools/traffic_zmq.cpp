// ZeroMQ PUSH -> PULL traffic, for the tests (messages the agent must pair) and for bench/overhead
// (the rate a PUSH/PULL pair reaches, with and without the agent). One line of key=value fields:
//   zmq-pull messages=N seconds=S msgs_per_s=R cpu_s=C   seconds: first to last message
//   zmq-push messages=N seconds=S cpu_s=C
#include "traffic.hpp"

#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>

namespace skewscope::traffic {
namespace {

// One context and socket, closed on every path (a throw included).
class ZmqSocket {
 public:
  explicit ZmqSocket(int type) : context_(zmq_ctx_new()), socket_(zmq_socket(context_, type)) {
    if (!socket_) throw std::runtime_error(std::string("zmq_socket: ") + zmq_strerror(zmq_errno()));
  }
  ~ZmqSocket() {
    if (socket_) zmq_close(socket_);
    zmq_ctx_term(context_);
  }
  ZmqSocket(const ZmqSocket&) = delete;
  ZmqSocket& operator=(const ZmqSocket&) = delete;
  void* get() const { return socket_; }

 private:
  void* context_;
  void* socket_;
};

// Ends at --count, at --duration, or --idle-exit seconds after the last message (the pusher has
// finished: a benchmark need not wait out its whole --duration).
void zmq_pull(const Options& o) {
  ZmqSocket sock(ZMQ_PULL);
  if (zmq_bind(sock.get(), o.endpoint.c_str()) != 0)
    throw std::runtime_error("zmq_bind " + o.endpoint + ": " + zmq_strerror(zmq_errno()));
  int timeout_ms = 100;
  zmq_setsockopt(sock.get(), ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
  std::vector<char> buf(kMaxMessage);
  long n = 0;
  Clock::time_point first{}, last{};
  auto start = Clock::now();
  while (!g_stop && (o.bounds.count <= 0 || n < o.bounds.count) && seconds_since(start) < o.bounds.duration) {
    if (zmq_recv(sock.get(), buf.data(), buf.size(), 0) < 0) {
      if (o.idle_exit > 0 && n > 0 && seconds_since(last) > o.idle_exit) break;
      continue;
    }
    if (n == 0) first = Clock::now();
    ++n;
    last = Clock::now();
  }
  const double secs = std::chrono::duration<double>(last - first).count();
  std::printf("zmq-pull messages=%ld seconds=%.6f msgs_per_s=%.1f cpu_s=%.6f\n", n, secs,
              secs > 0 ? static_cast<double>(n - 1) / secs : 0.0, cpu_seconds());
}

void zmq_push(Options o) {
  ZmqSocket sock(ZMQ_PUSH);
  int linger_ms = 5000;  // lets queued messages out after the last send
  zmq_setsockopt(sock.get(), ZMQ_LINGER, &linger_ms, sizeof linger_ms);
  if (zmq_connect(sock.get(), o.endpoint.c_str()) != 0)
    throw std::runtime_error("zmq_connect " + o.endpoint + ": " + zmq_strerror(zmq_errno()));
  std::vector<char> buf(o.size, 'z');
  o.bounds.restart();
  long i = 0;
  for (; o.bounds.next(i); ++i)
    if (zmq_send(sock.get(), buf.data(), buf.size(), 0) < 0) break;
  std::printf("zmq-push messages=%ld seconds=%.6f cpu_s=%.6f\n", i, seconds_since(o.bounds.start), cpu_seconds());
  std::fflush(stdout);  // before the linger, which may last seconds
}

}  // namespace

void add_zmq_modes(CLI::App& app, Options& o, std::vector<Mode>& modes) {
  auto* pull = app.add_subcommand("zmq-pull", "bind a PULL socket and receive");
  pull->add_option("--bind", o.endpoint, "ZeroMQ endpoint, e.g. tcp://ADDR:PORT")->required();
  pull->add_option("--count", o.bounds.count, "messages (upper bound)")->check(CLI::Range(1L, kMaxCount));
  add_receive_duration(pull, o);
  pull->add_option("--idle-exit", o.idle_exit, "stop this many seconds after the last message (0: never)")
      ->check(CLI::Range(0.0, 3600.0));
  modes.push_back({pull, Needs::kDurationOrDefault, [&o] { zmq_pull(o); }});

  auto* push = app.add_subcommand("zmq-push", "connect a PUSH socket and send --size-byte messages");
  push->add_option("--connect", o.endpoint, "ZeroMQ endpoint, e.g. tcp://ADDR:PORT")->required();
  add_size(push, o);
  add_bounds(push, o, true);
  modes.push_back({push, Needs::kCountOrDuration, [&o] { zmq_push(o); }});
}

}  // namespace skewscope::traffic
