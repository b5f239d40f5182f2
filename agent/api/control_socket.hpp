// Mutating commands (simulate) arrive on a unix socket, mode 0600, never over HTTP: only root
// (or the agent's user) may change what the agent reports.
// Protocol: one line per connection, "simulate NAME=OFFSET[,DRIFTppm]\n"; the reply is one line,
// "ok ..." or "error: ...".
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace skewscope {

class ControlSocket {
 public:
  using Handler = std::function<std::string(const std::string& line)>;

  explicit ControlSocket(Handler handler) : handler_(std::move(handler)) {}
  ~ControlSocket();

  // Refuses a path where another agent answers; replaces a stale socket file.
  std::string bind(const std::string& path);
  void start();
  void stop();

 private:
  void serve();

  Handler handler_;
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Client side, for `skewscope simulate`: sends one line, returns the reply (or an error line).
std::string control_request(const std::string& path, const std::string& line, bool& reached);

}  // namespace skewscope
