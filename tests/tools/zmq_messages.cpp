// Exact-count ZeroMQ traffic for the message-level tests: every mode sends or answers a fixed
// number of messages and says how many it moved.
//   pull --bind EP --count N          receive N messages (exit 1 if the timeout comes first)
//   push --connect EP --count N       send N messages as fast as libzmq takes them: small messages
//                                     are coalesced into few writes by libzmq's I/O thread
//   rep  --bind EP --count N          answer N requests
//   req  --connect EP --count N       send N requests, each waiting for its reply
// --parts P sends each message as P frames (ZMQ_SNDMORE); --size B is the size of each frame;
// --hold-ms T keeps the socket open T ms after the last message (a slow peer reads all first).
// --timing (pull, rep) also prints `elapsed_ns T`: from the first message received to the last,
// so that a throughput measure leaves out process start and connection set-up.
#include <zmq.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string endpoint;
  long count = 1000;
  std::size_t size = 8;
  int parts = 1;
  int timeout_ms = 20000;
  int hold_ms = 0;  // keep the socket open this long after the last message (see main)
  bool timing = false;
};

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string(what) + ": " + zmq_strerror(zmq_errno()));
}

void send_message(void* sock, const std::vector<char>& frame, int parts) {
  for (int p = 0; p < parts; ++p)
    check(zmq_send(sock, frame.data(), frame.size(), p + 1 < parts ? ZMQ_SNDMORE : 0) >= 0, "zmq_send");
}

// Receives one whole message (all its frames); false on timeout.
bool recv_message(void* sock, std::vector<char>& buf) {
  int more = 0;
  do {
    if (zmq_recv(sock, buf.data(), buf.size(), 0) < 0) {
      if (zmq_errno() == EAGAIN) return false;
      check(false, "zmq_recv");
    }
    std::size_t len = sizeof more;
    zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len);
  } while (more);
  return true;
}

int run(const std::string& mode, const Options& o) {
  void* ctx = zmq_ctx_new();
  const int type = mode == "pull" ? ZMQ_PULL : mode == "push" ? ZMQ_PUSH : mode == "rep" ? ZMQ_REP : ZMQ_REQ;
  void* sock = zmq_socket(ctx, type);
  int linger = o.timeout_ms;
  zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sock, ZMQ_RCVTIMEO, &o.timeout_ms, sizeof o.timeout_ms);
  const bool binds = mode == "pull" || mode == "rep";
  check((binds ? zmq_bind(sock, o.endpoint.c_str()) : zmq_connect(sock, o.endpoint.c_str())) == 0,
        binds ? "zmq_bind" : "zmq_connect");
  std::vector<char> frame(o.size, 'm');
  std::vector<char> buf(o.size + 1024);
  long done = 0;
  std::chrono::steady_clock::time_point first, last;
  for (; done < o.count; ++done) {
    if (mode == "push") {
      send_message(sock, frame, o.parts);
    } else if (mode == "pull") {
      if (!recv_message(sock, buf)) break;
    } else if (mode == "rep") {
      if (!recv_message(sock, buf)) break;
      send_message(sock, frame, o.parts);
    } else {
      send_message(sock, frame, o.parts);
      if (!recv_message(sock, buf)) break;
    }
    if (o.timing) {
      last = std::chrono::steady_clock::now();
      if (done == 0) first = last;
    }
  }
  std::cout << mode << ": " << done << " messages" << std::endl;
  if (o.timing)
    std::cout << "elapsed_ns " << std::chrono::duration_cast<std::chrono::nanoseconds>(last - first).count()
              << std::endl;
  if (o.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
  zmq_close(sock);  // with linger: the last messages still leave before the context ends
  zmq_ctx_term(ctx);
  return done == o.count ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"exact-count ZeroMQ traffic"};
  Options o;
  std::string mode;
  app.add_option("mode", mode, "pull | push | rep | req")
      ->required()
      ->check(CLI::IsMember({"pull", "push", "rep", "req"}));
  app.add_option("--bind,--connect", o.endpoint, "tcp://ADDR:PORT")->required();
  app.add_option("--count", o.count)->check(CLI::Range(1L, 10'000'000L));
  app.add_option("--size", o.size)->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  app.add_option("--parts", o.parts)->check(CLI::Range(1, 64));
  app.add_option("--timeout-ms", o.timeout_ms)->check(CLI::Range(1, 600000));
  // A sender that closes while its peer still reads (a slow JeroMQ PULL) may reset the connection
  // (unread bytes in its own receive queue): the peer's socket then loses its local port in the
  // kernel, and its later reads can no longer be followed. Holding the socket avoids that shape.
  app.add_option("--hold-ms", o.hold_ms, "keep the socket open this long after the last message")
      ->check(CLI::Range(0, 600000));
  app.add_flag("--timing", o.timing, "print elapsed_ns from the first message to the last");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(mode, o);
  } catch (const std::exception& e) {
    std::cerr << "zmq_messages: " << e.what() << std::endl;
    return 2;
  }
}
