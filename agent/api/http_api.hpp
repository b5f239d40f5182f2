// The agent's HTTP endpoints: /, /metrics, /api/v1/status. GET (and HEAD) only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "health/agent_report.hpp"

namespace httplib {
class Server;
}

namespace skewscope {

class HttpApi {
 public:
  using ReportFn = std::function<AgentReport()>;

  HttpApi(ReportFn report, std::string version);
  ~HttpApi();

  // Binds before anything is attached so a port conflict fails fast. Port 0 picks a free port.
  // Returns an empty string on success, else the reason.
  std::string bind(const std::string& host, int port);
  int port() const { return port_; }
  void start();  // serves on its own threads until stop()
  void stop();

 private:
  ReportFn report_;
  std::string version_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = -1;
};

}  // namespace skewscope
