#include "api/http_api.hpp"

#include <fcntl.h>
#include <microhttpd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <optional>

#include "api/agent_metrics.hpp"
#include "api/basic_auth.hpp"
#include "api/listen_socket.hpp"
#include "api/page_assets.hpp"
#include "api/request_deadlines.hpp"
#include "api/status_json.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {
namespace {

// While a connection is open, the event loop wakes at least this often to cut connections past
// their request deadline; with none, at least every kIdleWakeMs (stop() ends that wait at once).
constexpr int kLoopWakeMs = 100;
constexpr int kIdleWakeMs = 1000;

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

MHD_Result collect_argument(void* cls, MHD_ValueKind, const char* key, const char* value) {
  (*static_cast<HttpApi::Query*>(cls))[key] = value ? value : "";
  return MHD_YES;
}

MHD_Result send_reply(MHD_Connection* connection, const HttpReply& reply, bool allow_header = false) {
  MHD_Response* response =
      MHD_create_response_from_buffer(reply.body.size(), const_cast<char*>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;  // out of memory: the connection is closed
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type.c_str());
  if (allow_header) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned>(reply.status), response);
  MHD_destroy_response(response);
  return queued;
}

}  // namespace

// Every callback below runs on the one event-loop thread (MHD_run_wait in HttpApi::start), or on
// the thread in stop() after that loop has ended: the bookkeeping needs no lock.
struct HttpApi::Server {
  HttpApi& api;
  RequestDeadlines deadlines;
  BasicAuth auth;
  std::string start_error;  // libmicrohttpd's own messages while starting
  // The basic-auth user of the request being answered (one at a time on the one loop thread).
  std::optional<std::string> user{};

  // nullopt: let the request through; else the reply already queued (401 or 429).
  std::optional<MHD_Result> refuse_unauthorized(MHD_Connection* connection) {
    user.reset();
    if (!auth.enabled()) return std::nullopt;
    char* password = nullptr;
    char* name = MHD_basic_auth_get_username_password(connection, &password);
    BasicAuth::Verdict verdict = auth.check(name, password, monotonic_ns());
    if (verdict == BasicAuth::Verdict::allowed && name != nullptr) user = name;
    MHD_free(name);
    MHD_free(password);
    if (verdict == BasicAuth::Verdict::allowed) return std::nullopt;
    if (verdict == BasicAuth::Verdict::busy) {
      HttpReply busy{429, "too many password checks; retry in a second\n", "text/plain"};
      return send_reply(connection, busy);
    }
    static const char kDenied[] = "unauthorized\n";
    MHD_Response* response =
        MHD_create_response_from_buffer(sizeof kDenied - 1, const_cast<char*>(kDenied), MHD_RESPMEM_PERSISTENT);
    if (response == nullptr) return MHD_NO;
    MHD_Result queued = MHD_queue_basic_auth_fail_response(connection, "skewscope", response);
    MHD_destroy_response(response);
    return queued;
  }

  static MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                               const char*, size_t* upload_size, void** request_state) {
    auto& api = static_cast<Server*>(cls)->api;
    const std::string verb = method;
    if (verb != MHD_HTTP_METHOD_GET && verb != MHD_HTTP_METHOD_HEAD)
      return send_reply(
          connection,
          {405, "method not allowed: the API is read-only; use the control socket to change the agent\n", "text/plain"},
          true);
    // The first call comes with the headers. A request without a body is answered on the next
    // call (request complete), which lets libmicrohttpd keep the connection for the next scrape.
    // A request that announces a body is answered at once: libmicrohttpd then closes the
    // connection instead of reading the body (it allows a reply only before or after a body).
    static char seen_headers;
    if (*request_state == nullptr) {
      *request_state = &seen_headers;
      const bool has_body = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) ||
                            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
      if (!has_body) return MHD_YES;
    } else if (*upload_size != 0) {
      *upload_size = 0;  // not reached for a body announced in the headers; dropped, never buffered
      return MHD_YES;
    }
    auto& server = *static_cast<Server*>(cls);
    if (auto refused = server.refuse_unauthorized(connection)) return *refused;
    try {
      Query query;
      MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, collect_argument, &query);
      return send_reply(connection, api.answer(url, std::move(query), server.user ? &*server.user : nullptr));
    } catch (const std::exception& e) {
      return send_reply(connection, {500, std::string("internal error: ") + e.what() + "\n", "text/plain"});
    }
  }

  static void on_connection(void* cls, MHD_Connection* connection, void**, MHD_ConnectionNotificationCode code) {
    auto& server = *static_cast<Server*>(cls);
    const auto id = reinterpret_cast<std::uintptr_t>(connection);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      if (info != nullptr) server.deadlines.opened(id, info->connect_fd, monotonic_ns());
    } else {
      server.deadlines.closed(id);
    }
  }

  static void on_completed(void* cls, MHD_Connection* connection, void**, MHD_RequestTerminationCode code) {
    if (code == MHD_REQUEST_TERMINATED_COMPLETED_OK)
      static_cast<Server*>(cls)->deadlines.completed(reinterpret_cast<std::uintptr_t>(connection), monotonic_ns());
  }

  // Per-client errors (bad requests, resets) are the client's doing: logging them would let any
  // client fill the agent's log. Only what happens while starting is kept, for the error message.
  static void on_log(void* cls, const char* format, va_list args) {
    auto& server = *static_cast<Server*>(cls);
    if (server.api.daemon_ != nullptr) return;
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    server.start_error += text;
  }

  void cut_overdue() {
    for (int fd : deadlines.expire(monotonic_ns())) {
      api.deadline_cuts_.fetch_add(1);  // counted before the client can see the cut
      // The server sees end-of-stream on its next pass and closes and forgets the connection.
      ::shutdown(fd, SHUT_RDWR);
    }
  }
};

HttpApi::HttpApi(ReportFn report, std::string version, HttpLimits limits)
    : report_(std::move(report)),
      version_(std::move(version)),
      limits_(limits),
      server_(
          std::make_unique<Server>(Server{*this,
                                          RequestDeadlines(std::chrono::nanoseconds(limits.request_deadline).count()),
                                          BasicAuth({}, password_matches),
                                          {}})) {}

HttpApi::~HttpApi() { stop(); }

void HttpApi::add_route(const std::string& path, RouteFn handler) {
  routes_[path] = std::move(handler);
  tenant_route_[path] = false;
}

void HttpApi::add_tenant_route(const std::string& path, RouteFn handler) {
  routes_[path] = std::move(handler);
  tenant_route_[path] = true;
}

std::vector<std::string> HttpApi::basic_auth_users() const {
  std::vector<std::string> users;
  for (const auto& [user, hash] : web_config_.basic_auth_users) users.push_back(user);
  return users;
}

HttpReply HttpApi::answer(const std::string& path, Query query, const std::string* user) const {
  // The live page (/, /page.js, /page.css), embedded at build time (api/page_assets.hpp).
  if (const PageAsset* asset = find_page_asset(path))
    return {200, std::string(asset->body), std::string(asset->content_type)};
  // Which view the request gets (docs/tenants.md): a tenant's user always its own tenant's.
  auto requested = query.find("tenant");
  ScopeDecision scope = decide_scope(tenant_access_, user, requested == query.end() ? nullptr : &requested->second);
  if (scope.status != 200)
    return {scope.status, nlohmann::json{{"error", scope.error}}.dump() + "\n", "application/json"};
  if (scope.tenant) return answer_tenant(path, std::move(query), *scope.tenant);
  if (path == "/metrics") {
    std::string text = render_agent_metrics(report_(), version_);
    append_server_metrics(text);
    for (const auto& append : extra_metrics_) append(text);
    return {200, std::move(text), "text/plain; version=0.0.4; charset=utf-8"};
  }
  if (path == "/api/v1/status") return {200, status_json(report_()).dump() + "\n", "application/json"};
  if (auto it = routes_.find(path); it != routes_.end()) return it->second(query);
  return {404, "not found; see / for the endpoints\n", "text/plain"};
}

HttpReply HttpApi::answer_tenant(const std::string& path, Query query, const std::string& tenant) const {
  const TenantMap& tenants = tenant_access_.tenants;
  if (path == "/metrics") {
    std::string text = render_agent_metrics(report_(), version_);
    for (const auto& append : extra_metrics_) append(text);
    return {200, tenant_metrics_text(text, tenants, tenant), "text/plain; version=0.0.4; charset=utf-8"};
  }
  if (path == "/api/v1/status")
    return {200, tenant_status_json(status_json(report_()), tenants, tenant).dump() + "\n", "application/json"};
  auto it = routes_.find(path);
  if (it == routes_.end()) return {404, "not found; see / for the endpoints\n", "text/plain"};
  if (!tenant_route_.at(path))
    return {403, nlohmann::json{{"error", path + " is the operator's: not in a tenant's view"}}.dump() + "\n",
            "application/json"};
  query["tenant"] = tenant;
  return it->second(query);
}

// The endpoint's own refusals are counted and exported like every other drop.
void HttpApi::append_server_metrics(std::string& out) const {
  PrometheusWriter w(out);
  w.family("skewscope_http_connections_open", "gauge", "Connections to this HTTP endpoint, including this one.");
  w.sample("skewscope_http_connections_open", static_cast<double>(server_->deadlines.open_connections()));
  w.family("skewscope_http_connections_cut_total", "counter",
           "Connections closed by the endpoint because a request took longer than the request deadline.");
  w.sample("skewscope_http_connections_cut_total", {{"reason", "request_deadline"}},
           static_cast<double>(deadline_cuts_.load()));
  w.family(
      "skewscope_http_auth_failures_total", "counter",
      "Requests refused by basic auth: wrong or missing credentials (401), or over the password-check budget (429).");
  w.sample("skewscope_http_auth_failures_total", {{"reason", "denied"}},
           static_cast<double>(server_->auth.denied_total()));
  w.sample("skewscope_http_auth_failures_total", {{"reason", "busy"}}, static_cast<double>(server_->auth.busy_total()));
}

Status HttpApi::bind(const std::string& host, int port) {
  if (daemon_ != nullptr) return Status::fail("the HTTP endpoint is already bound");
  auto opened = open_listen_socket(host, port);
  if (!opened) return Status::fail(opened.error);
  const ListenSocket socket = *opened;
  // The server is set up here, not in start(), so that a bad TLS key fails before anything is
  // attached. Without the loop (start()) nothing is served: connections wait in the backlog.
  // libmicrohttpd closes the socket it is given when it fails to start, and when it stops: it
  // gets a duplicate, so that ours is closed here exactly once whatever happens.
  const int handed = fcntl(socket.fd, F_DUPFD_CLOEXEC, 0);
  Status created = handed < 0
                       ? Status::fail(std::string("cannot duplicate the listening socket: ") + std::strerror(errno))
                       : create_server(handed);
  close(socket.fd);
  if (!created) return created;
  port_ = socket.port;
  return Status::ok();
}

Status HttpApi::use_web_config(WebConfig config) {
  if (daemon_ != nullptr) return Status::fail("the web configuration must be set before bind()");
  if (config.tls() && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
    return Status::fail("this libmicrohttpd was built without TLS support");
  web_config_ = std::move(config);
  server_->auth = BasicAuth(web_config_.basic_auth_users, password_matches);
  return Status::ok();
}

Status HttpApi::use_web_config_file(const std::string& path) {
  if (path.empty()) return Status::ok();
  Result<WebConfig> config = load_web_config(path);
  return config ? use_web_config(*config.value) : Status::fail(config.error);
}

Status HttpApi::create_server(int listen_fd) {
  // No internal thread: the loop below drives libmicrohttpd's epoll loop, so the deadline sweep
  // and every callback share one thread. No Range support exists in libmicrohttpd: a Range header
  // is ignored and the whole (small) body is sent once.
  MHD_OptionItem options[] = {
      {MHD_OPTION_LISTEN_SOCKET, listen_fd, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, limits_.max_connections, nullptr},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits_.max_connections_per_address, nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(limits_.connection_memory_bytes), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, limits_.idle_timeout_seconds, nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Server::on_connection), server_.get()},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Server::on_completed), server_.get()},
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&Server::on_log), server_.get()},
      {MHD_OPTION_END, 0, nullptr},  // or the TLS key and certificate, below
      {MHD_OPTION_END, 0, nullptr},
      {MHD_OPTION_END, 0, nullptr},
  };
  unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (web_config_.tls()) {
    const std::size_t end = std::size(options) - 3;
    options[end] = {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(web_config_.key_pem.c_str())};
    options[end + 1] = {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(web_config_.cert_pem.c_str())};
    flags |= MHD_USE_TLS;
  }
  server_->start_error.clear();
  daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &Server::on_request, server_.get(), MHD_OPTION_ARRAY, options,
                             MHD_OPTION_END);
  if (daemon_ == nullptr)
    return Status::fail("cannot start the HTTP server: " +
                        (server_->start_error.empty() ? "libmicrohttpd refused" : server_->start_error));
  return Status::ok();
}

Status HttpApi::start() {
  if (daemon_ == nullptr) return Status::fail("the HTTP endpoint is not bound");
  if (thread_.joinable()) return Status::ok();
  stopping_ = false;
  // libmicrohttpd's epoll set in ours (its documented use with an external loop), beside the
  // eventfd that stop() writes.
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
  if (auto made = StopEvent::create()) stop_event_.emplace(std::move(*made));
  loop_epoll_ = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {info ? info->epoll_fd : -1, stop_event_ ? stop_event_->fd() : -1}) {
    epoll_event entry{};
    entry.events = EPOLLIN;
    entry.data.fd = fd;
    if (fd < 0 || loop_epoll_ < 0 || epoll_ctl(loop_epoll_, EPOLL_CTL_ADD, fd, &entry) != 0) {
      close_loop();
      break;
    }
  }
  thread_ = std::thread([this] {
    while (!stopping_.load(std::memory_order_relaxed)) {
      if (loop_epoll_ >= 0 && !wait_in_loop_epoll()) {
        close(loop_epoll_);  // it cannot be waited on: libmicrohttpd's own wait from now on
        loop_epoll_ = -1;
      }
      const bool ran = (loop_epoll_ < 0 ? MHD_run_wait(daemon_, kLoopWakeMs) : MHD_run(daemon_)) == MHD_YES;
      // An error here is the loop's own (epoll failed): pause instead of spinning.
      if (!ran) std::this_thread::sleep_for(std::chrono::milliseconds(kLoopWakeMs));
      server_->cut_overdue();
    }
  });
  return Status::ok();
}

bool HttpApi::wait_in_loop_epoll() {
  long long wait = server_->deadlines.open_connections() > 0 ? kLoopWakeMs : kIdleWakeMs;
  MHD_UNSIGNED_LONG_LONG due = 0;  // libmicrohttpd's own: its idle timeouts, work it has queued
  if (MHD_get_timeout(daemon_, &due) == MHD_YES) wait = std::min<long long>(wait, static_cast<long long>(due));
  epoll_event ready[2];
  return epoll_wait(loop_epoll_, ready, 2, static_cast<int>(wait)) >= 0 || errno == EINTR;  // EINTR: a pass
}

void HttpApi::close_loop() {
  if (loop_epoll_ >= 0) close(loop_epoll_);
  loop_epoll_ = -1;
  stop_event_.reset();
}

void HttpApi::stop() {
  stopping_ = true;
  if (stop_event_) stop_event_->notify();
  if (thread_.joinable()) thread_.join();
  close_loop();
  // Closes every connection at once (no lingering on unsent data) and the listening socket.
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace skewscope
