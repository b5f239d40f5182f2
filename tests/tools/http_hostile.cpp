// http_hostile: slow, idle, trickling and flooding clients against the agent's HTTP endpoint, on
// loopback only, while /metrics latency is measured from 127.0.0.1 and the agent's RSS sampled.
//
//   http_hostile --target 127.0.0.1:PORT --pid PID            all checks, then a summary; exit 1 if
//                                                             a requirement fails, 2 on setup error
//   http_hostile --target ... --hold-seconds S                only hold the slow clients for S s
//                                                             (prints "holding N slow clients")
//
// The slow clients come from 127.0.1.1..127.0.1.K (bound before connect) so that per-address
// limits do not simply refuse them: this is the many-clients case. Everything is bounded: client
// counts, bytes sent and every phase's duration; the tool stops by itself.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

sockaddr_in ipv4(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) throw std::runtime_error("bad IPv4 address " + address);
  return addr;
}

// A non-blocking socket bound to `source` and connecting to `target`; -1 if that failed at once.
int start_connect(const sockaddr_in& target, const std::string& source) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from = ipv4(source, 0);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      (connect(fd, reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0 && errno != EINPROGRESS)) {
    close(fd);
    return -1;
  }
  return fd;
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  const int ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  if (ms <= 0) return false;
  pollfd p{fd, events, 0};
  return poll(&p, 1, ms) > 0;
}

struct Reply {
  bool ok = false;  // a complete response arrived before the deadline
  std::string raw;  // status line, headers and body
  double seconds = 0;
  int status() const { return raw.size() > 12 && raw.rfind("HTTP/1.", 0) == 0 ? std::atoi(raw.c_str() + 9) : 0; }
  std::size_t body_size() const {
    auto at = raw.find("\r\n\r\n");
    return at == std::string::npos ? 0 : raw.size() - at - 4;
  }
};

// One request with Connection: close from `source`, read to the end, all within timeout_s.
Reply request(const sockaddr_in& target, const std::string& source, const std::string& text, double timeout_s) {
  Reply reply;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  int fd = start_connect(target, source);
  if (fd < 0) return reply;
  std::size_t sent = 0;
  while (sent < text.size() && wait_for(fd, POLLOUT, deadline)) {
    ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  char buf[65536];
  while (wait_for(fd, POLLIN, deadline)) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) {
      reply.ok = n == 0 && sent == text.size() && reply.status() != 0;
      break;
    }
    reply.raw.append(buf, static_cast<std::size_t>(n));
  }
  reply.seconds = since(start);
  close(fd);
  return reply;
}

std::string get_request(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n" + extra + "\r\n";
}

double rss_mb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return -1;
}

struct Latency {
  std::vector<double> seconds;  // answered requests
  int failed = 0;               // not answered 200 within the timeout
  double quantile(double q) const {
    if (seconds.empty()) return -1;
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    return s[std::min(s.size() - 1, static_cast<std::size_t>(q * static_cast<double>(s.size())))];
  }
  double max() const { return seconds.empty() ? -1 : *std::max_element(seconds.begin(), seconds.end()); }
  std::string summary() const {
    if (seconds.empty()) return "none answered (" + std::to_string(failed) + " failed)";
    char text[200];
    std::snprintf(text, sizeof text, "p50 %.2f ms, p99 %.2f ms, max %.2f ms (%zu answered, %d failed)",
                  quantile(0.5) * 1e3, quantile(0.99) * 1e3, max() * 1e3, seconds.size(), failed);
    return text;
  }
};

// /metrics from 127.0.0.1 every interval until `stop`; a reply later than 1 s counts as failed.
Latency measure_metrics(const sockaddr_in& target, const std::atomic<bool>& stop, std::atomic<int>* connected_now,
                        std::vector<int>* connected_at_samples) {
  Latency latency;
  while (!stop) {
    if (connected_now) connected_at_samples->push_back(connected_now->load());
    Reply r = request(target, "127.0.0.1", get_request("/metrics"), 1.0);
    if (r.ok && r.status() == 200)
      latency.seconds.push_back(r.seconds);
    else
      ++latency.failed;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return latency;
}

// The slow clients, driven by one poll loop. Kinds, round robin: idle (sends nothing), partial
// (half a request, then nothing), trickle (one byte per second of a header line that never ends),
// slow reader (a whole request, never reads the reply). Whoever the server cuts reconnects at once,
// so the load stays at N connections for as long as it runs.
class SlowClients {
 public:
  enum Kind { idle, partial, trickle, slow_reader, kinds };

  SlowClients(const sockaddr_in& target, int count, int sources) : target_(target) {
    for (int i = 0; i < count; ++i)
      clients_.push_back({-1, static_cast<Kind>(i % kinds), "127.0.1." + std::to_string(1 + i % sources), false, 0});
  }
  ~SlowClients() {
    for (auto& c : clients_)
      if (c.fd >= 0) close(c.fd);
  }

  std::atomic<int> connected{0};
  std::uint64_t cut_by_server = 0, connect_failures = 0;

  void run(const std::atomic<bool>& stop) {
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

 private:
  struct Client {
    int fd;
    Kind kind;
    std::string source;
    bool connected;
    int failures;
  };

  void open(Client& c) {
    c.connected = false;
    c.fd = start_connect(target_, c.source);
    if (c.fd < 0) ++connect_failures;
  }

  void handle(Client& c, short revents) {
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

  void reopen(Client& c, bool by_server) {
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

  sockaddr_in target_;
  std::vector<Client> clients_;
};

// Header floods: `lines` header lines of `line_bytes` each, sent until the server stops reading.
// Rejected means no 2xx: a 4xx reply, or the connection closed or reset before any reply.
struct FloodResult {
  int status = 0;
  std::size_t bytes_sent = 0;
};

FloodResult header_flood(const sockaddr_in& target, const std::string& source, int lines, int line_bytes) {
  FloodResult result;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  int fd = start_connect(target, source);
  if (fd < 0) return result;
  std::string chunk = "GET /metrics HTTP/1.1\r\nHost: agent\r\n";
  for (int i = 0; i < lines; ++i) {
    chunk += "X-Flood-" + std::to_string(i) + ": " + std::string(static_cast<std::size_t>(line_bytes), 'a') + "\r\n";
    if (chunk.size() < 65536 && i + 1 < lines) continue;
    if (i + 1 == lines) chunk += "\r\n";
    std::size_t off = 0;
    while (off < chunk.size() && wait_for(fd, POLLOUT, deadline)) {
      ssize_t n = send(fd, chunk.data() + off, chunk.size() - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    result.bytes_sent += off;
    if (off < chunk.size()) break;  // the server closed, reset, or stopped reading for 10 s
    chunk.clear();
  }
  std::string reply;
  char buf[4096];
  while (reply.size() < 12 && wait_for(fd, POLLIN, deadline)) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  result.status = reply.rfind("HTTP/1.", 0) == 0 ? std::atoi(reply.c_str() + 9) : 0;
  return result;
}

// Connections beyond the server's per-address limit are closed at once: opens `count` from one
// address, idle, and counts those the server ends within 1 s.
int closed_at_once(const sockaddr_in& target, const std::string& source, int count) {
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) fds.push_back(start_connect(target, source));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  int closed = 0;
  for (int fd : fds) {
    if (fd < 0) continue;
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN)) ++closed;
    close(fd);
  }
  return closed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hostile and slow HTTP clients against the skewscope agent (loopback only)"};
  std::string target_text;
  int pid = 0, slow = 200, sources = 50, floods = 4, range_parts = 2701, per_address_probe = 64;
  double load_seconds = 8, hold_seconds = 0, max_rss_growth_mb = 32;
  app.add_option("--target", target_text, "the agent's ADDR:PORT, on 127.0.0.0/8")->required();
  app.add_option("--pid", pid, "the agent's pid, for its RSS");
  app.add_option("--slow", slow, "slow clients held during the load phase")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--sources", sources, "source addresses 127.0.1.1..N for them")
      ->capture_default_str()
      ->check(CLI::Range(1, 250));
  app.add_option("--floods", floods, "concurrent header floods")->capture_default_str()->check(CLI::Range(0, 16));
  app.add_option("--range-parts", range_parts, "parts in the Range request")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--load-seconds", load_seconds, "how long /metrics is measured under the slow clients")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 120.0));
  app.add_option("--max-rss-growth-mb", max_rss_growth_mb,
                 "allowed RSS growth: the agent's limits allow 512 connections x 32 KiB request buffers "
                 "= 16 MiB, plus replies in flight and allocator slack; the old server took 130 MB per flood")
      ->capture_default_str();
  app.add_option("--per-address-probe", per_address_probe, "connections opened from one address (0: skip)")
      ->capture_default_str()
      ->check(CLI::Range(0, 500));
  app.add_option("--hold-seconds", hold_seconds, "only hold the slow clients this long, then exit")
      ->check(CLI::Range(0.0, 300.0));
  CLI11_PARSE(app, argc, argv);

  sockaddr_in target{};
  try {
    auto colon = target_text.rfind(':');
    if (colon == std::string::npos) throw std::runtime_error("--target must be ADDR:PORT");
    target = ipv4(target_text.substr(0, colon), std::stoi(target_text.substr(colon + 1)));
  } catch (const std::exception& e) {
    std::cerr << "http_hostile: " << e.what() << "\n";
    return 2;
  }
  if ((ntohl(target.sin_addr.s_addr) >> 24) != 127) {
    std::cerr << "http_hostile: --target must be on loopback (127.0.0.0/8)\n";
    return 2;
  }

  if (hold_seconds > 0) {
    SlowClients clients(target, slow, sources);
    std::atomic<bool> stop{false};
    std::thread loop([&] { clients.run(stop); });
    const auto start = Clock::now();
    bool announced = false;
    while (since(start) < hold_seconds) {
      if (!announced && clients.connected >= slow) {
        std::cout << "holding " << clients.connected << " slow clients" << std::endl;
        announced = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    stop = true;
    loop.join();
    std::cout << "released; cut by server " << clients.cut_by_server << ", failed connects " << clients.connect_failures
              << std::endl;
    return announced ? 0 : 2;
  }

  std::vector<std::string> failures;
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) failures.push_back(what);
    return ok;
  };
  std::atomic<bool> sampling{true};
  double rss_peak = 0;
  std::thread rss_sampler([&] {
    while (sampling && pid > 0) {
      rss_peak = std::max(rss_peak, rss_mb(pid));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const double rss_start = pid > 0 ? rss_mb(pid) : -1;
  if (pid > 0 && rss_start < 0) {
    std::cerr << "http_hostile: no process " << pid << "\n";
    sampling = false;
    rss_sampler.join();
    return 2;
  }

  // 1. Baseline: /metrics with nobody else connected.
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    stop = true;
  });
  Latency baseline = measure_metrics(target, stop, nullptr, nullptr);
  stopper.join();
  std::printf("baseline   /metrics %s\n", baseline.summary().c_str());
  if (!require(baseline.failed == 0 && !baseline.seconds.empty(), "baseline /metrics not answered")) {
    std::fprintf(stderr, "http_hostile: the agent does not answer /metrics; nothing else measured\n");
    sampling = false;
    rss_sampler.join();
    return 2;
  }

  // 2. Multi-part Range on the landing page (a fixed body): the reply must not be larger.
  Reply plain = request(target, "127.0.0.1", get_request("/"), 5);
  // Every part the whole body: the most a server that honours multi-part ranges can be made to send.
  std::string ranges = "Range: bytes=0-";
  for (int i = 1; i < range_parts; ++i) ranges += ",0-";
  Reply ranged = request(target, "127.0.0.1", get_request("/", ranges + "\r\n"), 5);
  std::printf("range      plain body %zu B; %d-part Range request of %zu B: status %d, body %zu B\n", plain.body_size(),
              range_parts, ranges.size(), ranged.status(), ranged.body_size());
  require(plain.ok && plain.body_size() > 0, "landing page not served");
  require(ranged.body_size() <= plain.body_size(), "Range reply larger than the plain body");

  // 3. Header floods, concurrent: half 64k lines of 1 KB, half 64k tiny lines (count, not size).
  std::vector<FloodResult> flood_results(static_cast<std::size_t>(floods));
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < floods; ++i)
      threads.emplace_back([&, i] {
        flood_results[static_cast<std::size_t>(i)] =
            header_flood(target, "127.0.3." + std::to_string(1 + i), 65536, i % 2 == 0 ? 1024 : 1);
      });
    for (auto& t : threads) t.join();
  }
  for (int i = 0; i < floods; ++i) {
    const auto& f = flood_results[static_cast<std::size_t>(i)];
    std::printf("flood      %s lines: %zu B sent before the server stopped reading, reply status %d\n",
                i % 2 == 0 ? "64k x 1 KB" : "64k tiny", f.bytes_sent, f.status);
    require(f.status == 0 || f.status >= 400, "header flood " + std::to_string(i) + " not rejected");
    require(f.bytes_sent < 65536ull * 1024, "header flood " + std::to_string(i) + " read to the end");
  }

  // 4. Slow clients from many addresses; /metrics measured from 127.0.0.1 meanwhile.
  SlowClients clients(target, slow, sources);
  stop = false;
  std::thread loop([&] { clients.run(stop); });
  const auto ramp = Clock::now();
  while (clients.connected < slow && since(ramp) < 10) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double ramp_seconds = since(ramp);
  std::atomic<bool> stop_measure{false};
  std::vector<int> connected_samples;
  std::thread measurer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(load_seconds));
    stop_measure = true;
  });
  Latency loaded = measure_metrics(target, stop_measure, &clients.connected, &connected_samples);
  measurer.join();
  stop = true;
  loop.join();
  std::sort(connected_samples.begin(), connected_samples.end());
  const int connected_min = connected_samples.empty() ? 0 : connected_samples.front();
  const int connected_median = connected_samples.empty() ? 0 : connected_samples[connected_samples.size() / 2];
  std::printf(
      "slow       %d clients from %d addresses (idle, partial, trickle, slow-reader), all connected after %.1f s; "
      "connected during the measurement: min %d, median %d; cut by the server %llu, failed connects %llu\n",
      slow, sources, ramp_seconds, connected_min, connected_median,
      static_cast<unsigned long long>(clients.cut_by_server),
      static_cast<unsigned long long>(clients.connect_failures));
  std::printf("loaded     /metrics %s\n", loaded.summary().c_str());
  // The load must have been there, or the latency says nothing.
  if (connected_median < slow * 95 / 100) {
    std::fprintf(stderr, "http_hostile: could not hold %d slow clients (median %d): no verdict on latency\n", slow,
                 connected_median);
    failures.push_back("slow clients not held");
  }
  require(loaded.failed == 0 && !loaded.seconds.empty() && loaded.max() < 1.0,
          "/metrics not answered within 1 s with slow clients connected");
  if (load_seconds >= 7) require(clients.cut_by_server > 0, "no slow client ever cut by the server");

  // 5. Per-address limit: more connections from one address than a scraper needs.
  if (per_address_probe > 0) {
    int closed = closed_at_once(target, "127.0.2.1", per_address_probe);
    std::printf("per-addr   %d idle connections from 127.0.2.1: %d closed by the server within 1 s\n",
                per_address_probe, closed);
    require(closed > 0, "no per-address connection limit");
  }

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  sampling = false;
  rss_sampler.join();
  if (pid > 0) {
    const double rss_end = rss_mb(pid);
    std::printf("rss        start %.1f MB, peak %.1f MB (growth %.1f MB, bound %.0f MB), end %.1f MB\n", rss_start,
                rss_peak, rss_peak - rss_start, max_rss_growth_mb, rss_end);
    require(rss_peak - rss_start <= max_rss_growth_mb, "agent RSS grew beyond the bound");
  }
  for (const auto& f : failures) std::printf("FAIL       %s\n", f.c_str());
  std::printf("result     %s\n", failures.empty() ? "PASS" : "FAIL");
  return failures.empty() ? 0 : 1;
}
