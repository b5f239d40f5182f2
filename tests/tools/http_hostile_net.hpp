// http_hostile's loopback plumbing: addresses, non-blocking connects from a chosen source address,
// and one whole HTTP request with a deadline. Every phase of the tool (the /metrics measurement,
// the Range check, the floods, the slow clients) opens its connections through these, so they are
// a file of their own rather than repeated in each.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string>

namespace http_hostile {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Throws std::runtime_error on an address that is not IPv4 text.
sockaddr_in ipv4(const std::string& address, int port);

// A non-blocking socket bound to `source` and connecting to `target`; -1 if that failed at once.
int start_connect(const sockaddr_in& target, const std::string& source);

// Whether `events` came on fd before the deadline.
bool wait_for(int fd, short events, Clock::time_point deadline);

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
Reply request(const sockaddr_in& target, const std::string& source, const std::string& text, double timeout_s);

std::string get_request(const std::string& path, const std::string& extra = "");

}  // namespace http_hostile
