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
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/tenant_view.hpp"
#include "api/web_config.hpp"
#include "core/agent_report.hpp"
#include "skewscope/stop_event.hpp"

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
  // fast. Port 0 picks a free port.
  Status bind(const std::string& host, int port);
  // TLS and/or basic auth (before bind()); see api/web_config.hpp.
  Status use_web_config(WebConfig config);
  // The same from a --web.config.file path; an empty path changes nothing.
  Status use_web_config_file(const std::string& path);
  // A further read-only GET endpoint (before start()). In a tenant's view (docs/tenants.md) it
  // is refused with 403: it is the operator's.
  void add_route(const std::string& path, RouteFn handler);
  // A route that answers a tenant's view too: its query then holds "tenant", already checked
  // against the user's tenants (the client's own ?tenant= never reaches it unchecked).
  void add_tenant_route(const std::string& path, RouteFn handler);
  // Tenants and the basic-auth users bound to them (before start()); see api/tenant_view.hpp.
  void use_tenants(TenantAccess access) { tenant_access_ = std::move(access); }
  const TenantMap& tenants() const { return tenant_access_.tenants; }
  std::vector<std::string> basic_auth_users() const;
  // Further families appended to /metrics by a part of the agent the report does not hold (before start()).
  using MetricsFn = std::function<void(std::string&)>;
  void add_metrics(MetricsFn append) { extra_metrics_.push_back(std::move(append)); }
  int port() const { return port_; }
  // Serves on its own thread until stop(). An error when not bound.
  Status start();
  // Returns within about 0.1 s whatever the clients do: connections in flight are dropped.
  void stop();

  std::uint64_t deadline_cuts() const { return deadline_cuts_.load(); }

 private:
  struct Server;  // libmicrohttpd callbacks and per-connection bookkeeping (http_api.cpp)

  Status create_server(int listen_fd);
  // user: the basic-auth user of the request (nullptr without basic auth).
  HttpReply answer(const std::string& path, Query query, const std::string* user) const;
  HttpReply answer_tenant(const std::string& path, Query query, const std::string& tenant) const;
  void append_server_metrics(std::string& out) const;

  ReportFn report_;
  std::string version_;
  HttpLimits limits_;
  std::map<std::string, RouteFn> routes_;
  std::map<std::string, bool> tenant_route_;  // path -> answers a tenant's view
  TenantAccess tenant_access_;
  std::vector<MetricsFn> extra_metrics_;
  WebConfig web_config_;  // libmicrohttpd reads the PEM strings in place: they live as long as the server
  std::unique_ptr<Server> server_;
  int port_ = -1;
  MHD_Daemon* daemon_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  // The loop's own epoll set: libmicrohttpd's epoll descriptor and stop_event_, which stop()
  // notifies, so that a loop with no connection open waits a second (not 100 ms: an idle agent is
  // mostly its wake-ups) and still ends at once. -1 / none when either could not be made (-1 also
  // once a wait in it failed): the loop then waits in MHD_run_wait, 100 ms at a time.
  int loop_epoll_ = -1;
  std::optional<StopEvent> stop_event_;
  // Until a descriptor of the set is ready, the deadline of the loop's pace or libmicrohttpd's own
  // comes. False when epoll_wait failed (not EINTR): the set cannot be used any more.
  bool wait_in_loop_epoll();
  void close_loop();
  std::atomic<std::uint64_t> deadline_cuts_{0};
};

}  // namespace skewscope
