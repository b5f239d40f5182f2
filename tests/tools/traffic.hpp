// What the families of lab_traffic's modes share: their options, the loop bound every mode obeys,
// and how a family registers its subcommands. One family per file:
//   traffic_tcp.cpp       tcp-sink, tcp-source, echo-server, ping   (traffic for tests and demos)
//   traffic_shapes.cpp    reply-close-server/-client (a reply read with the FIN, connection churn),
//                         slow-sink, blocking-source (sends that wait seconds for buffer space)
//   traffic_measured.cpp  rr-server, rr-client, stream-sink, stream-source, syscalls   (timed, for
//                         bench/overhead and bench/overload)
//   traffic_zmq.cpp       zmq-pull, zmq-push (both); traffic_zmq_absent.cpp when built without ZeroMQ
#pragma once

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace skewscope::traffic {

using Clock = std::chrono::steady_clock;

// Set by SIGTERM/SIGINT: every loop checks it, so a killed mode still prints its summary line.
extern std::atomic<bool> g_stop;

constexpr long kMaxCount = 50'000'000;
constexpr std::size_t kMaxMessage = 1 << 20;

double seconds_since(Clock::time_point t);
// This process's user + system CPU seconds: the workload's own cost, which the agent's BPF
// programs add to (they run in the workload's syscalls).
double cpu_seconds();

// A listening socket on ADDR:PORT or [ADDR%IFACE]:PORT; throws naming the endpoint when it cannot.
int listen_on(const std::string& endpoint, int backlog);
// Listens on ADDR:PORT and waits (until `duration_s` has passed since `start`, or g_stop) for
// one connection; TCP_NODELAY on it. Throws when nobody connects.
int accept_one(const std::string& endpoint, double duration_s);
// Whether fd became readable before `duration_s` after `start` (<= 0: no limit) or g_stop.
bool wait_readable(int fd, double duration_s, Clock::time_point start);

// Bounds a sending loop by --count and/or --duration, and paces it at --rate per second
// (0: as fast as possible). Unpaced, the clock is read once per 256 messages, so the bound
// costs the measured loop almost nothing.
struct Bounds {
  double rate = 0;
  long count = 0;
  double duration = 0;
  Clock::time_point start = Clock::now();
  void restart() { start = Clock::now(); }
  bool next(long i) const;
};

struct Options {
  std::string endpoint;
  std::size_t size = 64;       // message bytes
  std::string sizes = "1024";  // tcp-sink --read-sizes / tcp-source --write-sizes: a cycle
  Bounds bounds;               // --count, --duration, --rate
  double idle_exit = 0;        // zmq-pull: stop this many seconds after the last message
  std::string op = "write-devnull";
  std::string path = "/tmp/lab_traffic.io";
  double delay_ms = 0;            // reply-close-client: pause between request and read; slow-sink: between reads
  std::size_t socket_buffer = 0;  // slow-sink SO_RCVBUF / blocking-source SO_SNDBUF (0: the kernel's)
  bool reset = false;             // reply-close-server: close with a reset (SO_LINGER 0), not a FIN
  std::string call = "write";     // blocking-source: write, writev, sendto or sendmsg
};

// What kind of bound a mode needs before it may start.
enum class Needs { kDurationOrDefault, kCountOrDuration };

struct Mode {
  CLI::App* command;
  Needs needs;
  std::function<void()> run;
};

// Each family adds its subcommands to `app`, writing their flags into `options`.
void add_tcp_modes(CLI::App& app, Options& options, std::vector<Mode>& modes);
void add_measured_modes(CLI::App& app, Options& options, std::vector<Mode>& modes);
void add_zmq_modes(CLI::App& app, Options& options, std::vector<Mode>& modes);
void add_shape_modes(CLI::App& app, Options& options, std::vector<Mode>& modes);

// Flags shared by the modes.
void add_bounds(CLI::App* command, Options& options, bool with_rate);
void add_receive_duration(CLI::App* command, Options& options);
void add_size(CLI::App* command, Options& options);

}  // namespace skewscope::traffic
