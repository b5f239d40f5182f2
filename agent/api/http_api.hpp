// The agent's HTTP endpoints: /, /metrics, /api/v1/status. GET (and HEAD) only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "health/agent_report.hpp"

namespace httplib {
class Server;
}

namespace skewscope {

struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

class HttpApi {
 public:
  using ReportFn = std::function<AgentReport()>;
  using Query = std::map<std::string, std::string>;
  using RouteFn = std::function<HttpReply(const Query&)>;

  HttpApi(ReportFn report, std::string version);
  ~HttpApi();

  // Binds before anything is attached so a port conflict fails fast. Port 0 picks a free port.
  // Returns an empty string on success, else the reason.
  std::string bind(const std::string& host, int port);
  // A further read-only GET endpoint (before start()).
  void add_route(const std::string& path, RouteFn handler);
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
