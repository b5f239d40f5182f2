// http_hostile's measurements and one-shot attacks: /metrics latency, the agent's RSS, header
// floods and the per-address connection probe. Each returns what it saw and decides nothing; the
// driver (http_hostile.cpp) holds the requirements, so what is measured and what is required
// stay in separate files.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace http_hostile {

// The agent's VmRSS in MB; -1 if the process is gone.
double rss_mb(int pid);

struct Latency {
  std::vector<double> seconds;  // answered requests
  int failed = 0;               // not answered 200 within the timeout
  double quantile(double q) const;
  double max() const;
  std::string summary() const;
};

// /metrics from 127.0.0.1 every interval until `stop`; a reply later than 1 s counts as failed.
// With `connected_now`, its value at each request is appended to `connected_at_samples`.
Latency measure_metrics(const sockaddr_in& target, const std::atomic<bool>& stop, std::atomic<int>* connected_now,
                        std::vector<int>* connected_at_samples);

// Header floods: `lines` header lines of `line_bytes` each, sent until the server stops reading.
// Rejected means no 2xx: a 4xx reply, or the connection closed or reset before any reply.
struct FloodResult {
  int status = 0;
  std::size_t bytes_sent = 0;
};

FloodResult header_flood(const sockaddr_in& target, const std::string& source, int lines, int line_bytes);

// Connections beyond the server's per-address limit are closed at once: opens `count` from one
// address, idle, and counts those the server ends within 1 s.
int closed_at_once(const sockaddr_in& target, const std::string& source, int count);

}  // namespace http_hostile
