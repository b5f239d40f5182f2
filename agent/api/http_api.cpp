#include "api/http_api.hpp"

#include <httplib.h>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"

namespace skewscope {
namespace {

constexpr const char* kLandingPage = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>skewscope</title></head>
<body><h1>skewscope</h1>
<p>Tells whether timestamp-based causality between hosts can still be trusted.</p>
<ul><li><a href="/metrics">/metrics</a> (Prometheus text format 0.0.4)</li>
<li><a href="/api/v1/status">/api/v1/status</a> (JSON)</li>
<li><a href="/api/v1/spans?limit=20">/api/v1/spans</a> (recent spans, raw and corrected timestamps)</li>
<li><a href="/api/v1/whatif?clock_error=gaussian:1ms">/api/v1/whatif?clock_error=gaussian:1ms</a>
(inversion rates under a clock error model)</li></ul>
</body></html>
)";

}  // namespace

HttpApi::HttpApi(ReportFn report, std::string version)
    : report_(std::move(report)), version_(std::move(version)), server_(std::make_unique<httplib::Server>()) {
  // httplib's default also sets SO_REUSEPORT, which would let a second agent share the port and
  // split the scrapes between two agents; SO_REUSEADDR alone still allows a quick restart.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("method not allowed: the API is read-only; use the control socket to change the agent\n",
                    "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kLandingPage, "text/html"); });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_agent_metrics(report_(), version_), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/api/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(status_json(report_()).dump() + "\n", "application/json");
  });
}

HttpApi::~HttpApi() { stop(); }

void HttpApi::add_route(const std::string& path, RouteFn handler) {
  server_->Get(path, [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    Query query;
    for (const auto& [key, value] : req.params) query[key] = value;
    HttpReply reply = handler(query);
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type.c_str());
  });
}

std::string HttpApi::bind(const std::string& host, int port) {
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ < 0) return "cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
  return {};
}

void HttpApi::start() {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void HttpApi::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace skewscope
