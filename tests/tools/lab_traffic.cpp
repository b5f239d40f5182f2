// Real traffic between lab hosts (network namespaces) for the tests, the demo and the benchmarks.
// One subcommand per mode (traffic.hpp lists them by family); every mode is bounded (--count or
// --duration; receivers default to 60 s) and prints one summary line on stdout.
#include "traffic.hpp"

#include "tcp_endpoint.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace skewscope::traffic {

std::atomic<bool> g_stop{false};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

bool wait_readable(int fd, double duration_s, Clock::time_point start) {
  while (!g_stop) {
    if (duration_s > 0 && seconds_since(start) > duration_s) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) return true;
  }
  return false;
}

int listen_on(const std::string& endpoint, int backlog) {
  const tools::Endpoint addr = tools::parse_endpoint(endpoint);
  int lfd = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(lfd, addr.get(), addr.length) != 0 || listen(lfd, backlog) != 0) {
    std::string why = std::strerror(errno);
    close(lfd);
    throw std::runtime_error("cannot listen on " + endpoint + ": " + why);
  }
  return lfd;
}

int accept_one(const std::string& endpoint, double duration_s) {
  int lfd = listen_on(endpoint, 16);
  int one = 1;
  const bool ready = wait_readable(lfd, duration_s, Clock::now());
  int fd = ready ? accept(lfd, nullptr, nullptr) : -1;
  close(lfd);
  if (fd < 0) throw std::runtime_error("no connection on " + endpoint);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool Bounds::next(long i) const {
  if (g_stop || (count > 0 && i >= count)) return false;
  if (rate > 0) {
    if (duration > 0 && seconds_since(start) >= duration) return false;
    std::this_thread::sleep_until(start +
                                  std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / rate)));
    return true;
  }
  return duration <= 0 || (i & 255) != 0 || seconds_since(start) < duration;
}

void add_bounds(CLI::App* command, Options& options, bool with_rate) {
  if (with_rate)
    command->add_option("--rate", options.bounds.rate, "messages per second (0: as fast as possible)")
        ->check(CLI::Range(0.0, 1e7));
  command->add_option("--count", options.bounds.count, "messages (upper bound)")->check(CLI::Range(1L, kMaxCount));
  command->add_option("--duration", options.bounds.duration, "seconds (upper bound)")->check(CLI::Range(0.0, 3600.0));
}

void add_receive_duration(CLI::App* command, Options& options) {
  command->add_option("--duration", options.bounds.duration, "seconds to wait and receive (default 60)")
      ->check(CLI::Range(0.0, 3600.0));
}

void add_size(CLI::App* command, Options& options) {
  command->add_option("--size", options.size, "message bytes")->check(CLI::Range(std::size_t{1}, kMaxMessage));
}

}  // namespace skewscope::traffic

int main(int argc, char** argv) {
  using namespace skewscope::traffic;
  CLI::App app{"real traffic between lab hosts, for skewscope's tests, demo and benchmarks"};
  app.require_subcommand(1);
  Options options;
  std::vector<Mode> modes;
  add_tcp_modes(app, options, modes);
  add_measured_modes(app, options, modes);
  add_zmq_modes(app, options, modes);
  add_shape_modes(app, options, modes);
  CLI11_PARSE(app, argc, argv);
  const Mode* chosen = nullptr;
  for (const auto& mode : modes)
    if (mode.command->parsed()) chosen = &mode;
  if (!chosen) return 2;  // require_subcommand(1) already said so
  // Receivers wait for their peer, so they always end: 60 s unless told. Senders must be told.
  if (chosen->needs == Needs::kDurationOrDefault && options.bounds.duration <= 0) options.bounds.duration = 60;
  if (chosen->needs == Needs::kCountOrDuration && options.bounds.count <= 0 && options.bounds.duration <= 0) {
    std::cerr << "lab_traffic " << chosen->command->get_name() << ": give --count or --duration\n";
    return 2;
  }
  signal(SIGTERM, [](int) { g_stop = true; });
  signal(SIGINT, [](int) { g_stop = true; });
  signal(SIGPIPE, SIG_IGN);
  try {
    chosen->run();
  } catch (const std::exception& e) {
    std::cerr << "lab_traffic " << chosen->command->get_name() << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
