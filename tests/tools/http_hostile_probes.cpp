// http_hostile's measurements and one-shot attacks (see http_hostile_probes.hpp).
#include "http_hostile_probes.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "http_hostile_net.hpp"

namespace http_hostile {

double rss_mb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return -1;
}

double Latency::quantile(double q) const {
  if (seconds.empty()) return -1;
  std::vector<double> s = seconds;
  std::sort(s.begin(), s.end());
  return s[std::min(s.size() - 1, static_cast<std::size_t>(q * static_cast<double>(s.size())))];
}

double Latency::max() const { return seconds.empty() ? -1 : *std::max_element(seconds.begin(), seconds.end()); }

std::string Latency::summary() const {
  if (seconds.empty()) return "none answered (" + std::to_string(failed) + " failed)";
  char text[200];
  std::snprintf(text, sizeof text, "p50 %.2f ms, p99 %.2f ms, max %.2f ms (%zu answered, %d failed)",
                quantile(0.5) * 1e3, quantile(0.99) * 1e3, max() * 1e3, seconds.size(), failed);
  return text;
}

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

}  // namespace http_hostile
