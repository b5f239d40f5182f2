// The agent's HTTP endpoints: /, /metrics, /api/v1/status and added read-only routes.
// GET (and HEAD) only. Served by libmicrohttpd with bounded connections, memory and time per
// client (HttpLimits), so that slow or hostile clients cannot starve a scrape or hold shutdown.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "api/web_config.hpp"
#include "core/agent_report.hpp"

struct MHD_Daemon;

namespace skewscope {

struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

// Defaults sized for a metrics endpoint: a scrape is one small request; a few scrapers and
// curls share an address. The connection limit leaves room for 200+ stalled clients from many
// addresses with scrapes still served (beyond it new connections wait in the listen backlog).
struct HttpLimits {
  unsigned max_connections = 512;
  unsigned max_connections_per_address = 32;
  // Per-connection buffer for the request line and headers: more is answered 431, never grown.
  std::size_t connection_memory_bytes = 32 * 1024;
  unsigned idle_timeout_seconds = 5;
  std::chrono::milliseconds request_deadline{5000};  // accept (or last response) to response sent
};

class HttpApi {
 public:
  using ReportFn = std::function<AgentReport()>;
  using Query = std::map<std::string, std::string>;
  using RouteFn = std::function<HttpReply(const Query&)>;

  HttpApi(ReportFn report, std::string version, HttpLimits limits = {});
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds (and sets up TLS) before anything is attached so a port conflict or a bad key fails
  // fast. Port 0 picks a free port. Returns an empty string on success, else the reason.
  std::string bind(const std::string& host, int port);
  // TLS and/or basic auth (before bind()); see api/web_config.hpp. Empty string or the reason.
  std::string use_web_config(WebConfig config);
  // The same from a --web.config.file path; an empty path changes nothing.
  std::string use_web_config_file(const std::string& path);
  // A further read-only GET endpoint (before start()).
  void add_route(const std::string& path, RouteFn handler);
  int port() const { return port_; }
  // Serves on its own thread until stop(). Returns an empty string, or the reason (not bound).
  std::string start();
  // Returns within about 0.1 s whatever the clients do: connections in flight are dropped.
  void stop();

  std::uint64_t deadline_cuts() const { return deadline_cuts_.load(); }

 private:
  struct Server;  // libmicrohttpd callbacks and per-connection bookkeeping (http_api.cpp)

  std::string create_server(int listen_fd);
  HttpReply answer(const std::string& path, const Query& query) const;
  void append_server_metrics(std::string& out) const;

  ReportFn report_;
  std::string version_;
  HttpLimits limits_;
  std::map<std::string, RouteFn> routes_;
  WebConfig web_config_;  // libmicrohttpd reads the PEM strings in place: they live as long as the server
  std::unique_ptr<Server> server_;
  int port_ = -1;
  MHD_Daemon* daemon_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> deadline_cuts_{0};
};

}  // namespace skewscope
