// Mutating commands (simulate) arrive on a unix socket, mode 0600, never over HTTP: only root
// (or the agent's user) may change what the agent reports.
// Protocol: one line per connection, "simulate NAME=OFFSET[,DRIFTppm]\n"; the reply is one line,
// "ok ..." or "error: ...".
//
// Connections are served together by one poll() loop, each with a deadline for its whole line:
// a client that connects and trickles bytes (or sends nothing) is cut off at the deadline and
// never delays another client. At most kMaxConnections are open at once; more are answered
// "error: busy" and closed. Every such refusal is counted.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "skewscope/result.hpp"
#include "skewscope/stop_event.hpp"

namespace skewscope {

struct ControlSocketCounters {
  std::uint64_t served = 0;     // lines handled and answered
  std::uint64_t busy = 0;       // connections refused: kMaxConnections were open
  std::uint64_t timed_out = 0;  // no complete line within the deadline
  std::uint64_t too_long = 0;   // a line longer than kMaxLine
};

class ControlSocket {
 public:
  using Handler = std::function<std::string(const std::string& line)>;
  static constexpr std::size_t kMaxConnections = 16;
  static constexpr std::size_t kMaxLine = 4096;
  static constexpr std::chrono::milliseconds kLineDeadline{2000};

  explicit ControlSocket(Handler handler) : handler_(std::move(handler)) {}
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Creates the socket at path. Nothing that is not a stale socket is ever removed: a regular
  // file, a directory, a symlink (whatever it points to), or a socket where another process
  // answers is refused with an error naming it. Only a socket nobody listens on is replaced.
  Status bind(const std::string& path);
  void start();
  // Closes every connection and removes the socket file, if it is still the one we created.
  void stop();

  ControlSocketCounters counters() const;

 private:
  void serve();

  Handler handler_;
  std::string path_;
  dev_t dev_ = 0;  // identity of the socket file we created, checked before removing it
  ino_t ino_ = 0;
  int fd_ = -1;
  // Notified by stop(): ends the loop's wait, which is otherwise unbounded while no client is
  // connected. None (no eventfd could be made): the loop then looks at stopping_ every 200 ms.
  std::optional<StopEvent> stop_event_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::atomic<std::uint64_t> served_{0}, busy_{0}, timed_out_{0}, too_long_{0};
};

// Client side, for `skewscope simulate`: sends one line, returns the reply (or an error line).
std::string control_request(const std::string& path, const std::string& line, bool& reached);

}  // namespace skewscope
