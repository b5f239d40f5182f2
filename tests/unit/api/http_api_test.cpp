// The HTTP endpoint over loopback (no privileges): limits, methods, routes, deadlines, shutdown.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "api/http_api.hpp"
#include "api/listen_socket.hpp"

using namespace skewscope;
using Clock = std::chrono::steady_clock;

namespace {

int connect_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Reads until the server closes or timeout_ms pass without data.
std::string read_all(int fd, int timeout_ms) {
  std::string out;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string round_trip(int port, const std::string& request) {
  int fd = connect_loopback(port);
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply = read_all(fd, 3000);
  close(fd);
  return reply;
}

std::string get(int port, const std::string& target, const std::string& extra_headers = "") {
  return round_trip(port, "GET " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + extra_headers + "\r\n");
}

std::string body_of(const std::string& reply) {
  auto at = reply.find("\r\n\r\n");
  return at == std::string::npos ? "" : reply.substr(at + 4);
}

struct TestServer {
  HttpApi api;
  explicit TestServer(HttpLimits limits = {}) : api([] { return AgentReport{}; }, "9.9.9", limits) {
    api.add_route("/echo", [](const HttpApi::Query& q) {
      std::string out;
      for (const auto& [k, v] : q) out += k + "=" + v + ";";
      return HttpReply{200, out, "text/plain"};
    });
    REQUIRE(api.bind("127.0.0.1", 0));
    REQUIRE(api.start());
  }
};

}  // namespace

TEST_CASE("listen socket: port 0, a taken port and an unresolvable name give clear errors") {
  auto first = open_listen_socket("127.0.0.1", 0);
  REQUIRE(first);
  CHECK(first->fd >= 0);
  CHECK(first->port > 0);
  auto second = open_listen_socket("127.0.0.1", first->port);  // no SO_REUSEPORT sharing
  CHECK_FALSE(second);
  CHECK(second.error.find("Address already in use") != std::string::npos);
  close(first->fd);
  auto bogus = open_listen_socket("bogus.invalid", 1);
  CHECK_FALSE(bogus);
  CHECK(bogus.error.rfind("cannot resolve bogus.invalid:1: ", 0) == 0);
  CHECK(bogus.error.find("Success") == std::string::npos);
  auto v6 = open_listen_socket("::1", 0);
  if (v6) close(v6->fd);  // hosts without IPv6 loopback are allowed to refuse
}

TEST_CASE("the agent's port cannot be taken by a second agent") {
  TestServer server;
  HttpApi other([] { return AgentReport{}; }, "x");
  const std::string error = other.bind("127.0.0.1", server.api.port()).error;
  CHECK(error.find("cannot listen on 127.0.0.1:" + std::to_string(server.api.port())) == 0);
}

TEST_CASE("GET and HEAD are served, other methods get 405 with Allow, unknown paths 404") {
  TestServer server;
  const int port = server.api.port();
  std::string metrics = get(port, "/metrics");
  CHECK(metrics.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(metrics.find("text/plain; version=0.0.4") != std::string::npos);
  CHECK(body_of(metrics).find("skewscope_build_info") != std::string::npos);
  CHECK(get(port, "/api/v1/status").rfind("HTTP/1.1 200", 0) == 0);
  std::string head = round_trip(port, "HEAD /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(body_of(head).empty());
  std::string post =
      round_trip(port, "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
  CHECK(post.rfind("HTTP/1.1 405", 0) == 0);
  CHECK(post.find("Allow: GET, HEAD") != std::string::npos);
  CHECK(get(port, "/nothing").rfind("HTTP/1.1 404", 0) == 0);
}

TEST_CASE("query parameters reach the added routes, decoded") {
  TestServer server;
  std::string reply = get(server.api.port(), "/echo?clock_error=gaussian%3A1ms&limit=5");
  CHECK(body_of(reply) == "clock_error=gaussian:1ms;limit=5;");
}

TEST_CASE("a header flood is refused with 431 and the server keeps serving") {
  TestServer server;
  std::string flood;
  for (int i = 0; i < 2000; ++i) flood += "X-Flood-" + std::to_string(i) + ": " + std::string(1000, 'a') + "\r\n";
  int fd = connect_loopback(server.api.port());
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: t\r\n" + flood + "\r\n";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);  // may be cut short by the server's close
  std::string reply = read_all(fd, 3000);
  close(fd);
  CHECK(reply.rfind("HTTP/1.1 431", 0) == 0);
  CHECK(get(server.api.port(), "/metrics").rfind("HTTP/1.1 200", 0) == 0);
}

TEST_CASE("a many-part Range request gets the plain body once") {
  TestServer server;
  std::string ranges = "Range: bytes=0-0";
  for (int i = 1; i < 1000; ++i) ranges += "," + std::to_string(i) + "-" + std::to_string(i);
  std::string plain = body_of(get(server.api.port(), "/"));
  std::string ranged = get(server.api.port(), "/", ranges + "\r\n");
  CHECK(ranged.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(body_of(ranged) == plain);
}

TEST_CASE("keep-alive: two requests on one connection") {
  TestServer server;
  int fd = connect_loopback(server.api.port());
  const std::string two =
      "GET /echo?a=1 HTTP/1.1\r\nHost: t\r\n\r\nGET /echo?b=2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  send(fd, two.data(), two.size(), MSG_NOSIGNAL);
  std::string replies = read_all(fd, 3000);
  close(fd);
  CHECK(replies.find("a=1;") != std::string::npos);
  CHECK(replies.find("b=2;") != std::string::npos);
}

TEST_CASE("a client trickling its request is cut at the request deadline, not kept alive by its bytes") {
  HttpLimits limits;
  limits.request_deadline = std::chrono::milliseconds(600);
  limits.idle_timeout_seconds = 30;
  TestServer server(limits);
  int fd = connect_loopback(server.api.port());
  const auto start = Clock::now();
  bool closed = false;
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: " + std::string(200, 'h');
  for (std::size_t i = 0; i < request.size() && !closed; ++i) {
    if (send(fd, &request[i], 1, MSG_NOSIGNAL) != 1) closed = true;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      char c;
      if (recv(fd, &c, 1, 0) <= 0) closed = true;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  close(fd);
  CHECK(closed);
  CHECK(seconds < 5.0);  // 200 bytes at 50 ms each would take 10 s
  CHECK(server.api.deadline_cuts() == 1);
  std::string metrics = get(server.api.port(), "/metrics");
  CHECK(metrics.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(metrics.find("skewscope_http_connections_cut_total{reason=\"request_deadline\"} 1\n") != std::string::npos);
}

TEST_CASE("more connections from one address than allowed are closed at once") {
  HttpLimits limits;
  limits.max_connections_per_address = 4;
  TestServer server(limits);
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(connect_loopback(server.api.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the server accept them
  int extra = connect_loopback(server.api.port());
  CHECK(read_all(extra, 2000).empty());  // closed without a reply
  close(extra);
  for (int fd : held) close(fd);
}

TEST_CASE("stop() returns well under a second with stalled clients connected, and frees the port") {
  auto server = std::make_unique<TestServer>();
  const int port = server->api.port();
  std::vector<int> stalled;
  for (int i = 0; i < 30; ++i) {
    int fd = connect_loopback(port);
    send(fd, "GET /metrics HTTP/1.1\r\nHo", 25, MSG_NOSIGNAL);  // never finished
    stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = Clock::now();
  server->api.stop();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(seconds < 0.5);
  for (int fd : stalled) {
    CHECK(read_all(fd, 1000).empty());  // dropped: end of stream
    close(fd);
  }
  server.reset();
  auto again = open_listen_socket("127.0.0.1", port);  // the listening socket was closed
  CHECK(again);
  if (again) close(again->fd);
}

TEST_CASE("a TLS key libmicrohttpd cannot use fails bind(), with GnuTLS's reason, and frees the port") {
  auto probe = open_listen_socket("127.0.0.1", 0);
  REQUIRE(probe);
  const int port = probe->port;
  close(probe->fd);
  HttpApi api([] { return AgentReport{}; }, "x");
  WebConfig config;
  config.cert_pem = "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n";
  config.key_pem = "-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n";
  REQUIRE(api.use_web_config(config));
  const std::string error = api.bind("127.0.0.1", port).error;
  CHECK(error.rfind("cannot start the HTTP server: ", 0) == 0);
  CHECK(error.find("certificate") != std::string::npos);
  CHECK(api.start().error == "the HTTP endpoint is not bound");
  auto again = open_listen_socket("127.0.0.1", port);
  CHECK(again);
  if (again) close(again->fd);
}
