#include "otlp/otlp_exporter.hpp"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "opentelemetry/otlp_metrics_subset.pb.h"
#include "opentelemetry/otlp_trace_subset.pb.h"

using namespace skewscope;
using namespace skewscope::otlp;
namespace pb = skewscope::otlp::v1;

namespace {

constexpr std::int64_t kMs = 1'000'000;

std::vector<ExportSpan> spans(int n) {
  std::vector<ExportSpan> out(n);
  for (int i = 0; i < n; ++i) {
    out[i].span.send_ns = 1'000'000 + i;
    out[i].span.recv_ns = 1'100'000 + i;
    out[i].src = "a";
    out[i].dst = "b";
  }
  return out;
}

OtlpSettings settings_for(int port) {
  OtlpSettings s;
  s.url.host = "127.0.0.1";
  s.url.port = port;
  s.url.path = "/v1/traces";
  s.resource = {{"service.name", "skewscope"}};
  s.batch_delay_ns = 10 * kMs;
  s.timeout_ns = 2000 * kMs;
  s.max_attempts = 4;
  return s;
}

// A receiver on a free loopback port that answers the first `failures` requests with `status`.
struct Receiver {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::atomic<int> requests{0};
  std::atomic<int> spans{0};
  std::atomic<bool> saw_gzip{false};
  std::string content_type, tenant;

  Receiver(int failures, int status, const char* retry_after = nullptr) {
    server.Post("/v1/traces", [=, this](const httplib::Request& req, httplib::Response& res) {
      const int n = ++requests;
      content_type = req.get_header_value("Content-Type");
      tenant = req.get_header_value("x-tenant");
      if (n <= failures) {
        res.status = status;
        if (retry_after) res.set_header("Retry-After", retry_after);
        return;
      }
      // httplib has already inflated a gzip body (built with zlib); the header says it was sent so.
      saw_gzip = req.get_header_value("Content-Encoding") == "gzip" || saw_gzip;
      pb::ExportTraceServiceRequest request;
      if (!request.ParseFromString(req.body)) {
        res.status = 400;
        return;
      }
      spans += request.resource_spans(0).scope_spans(0).spans_size();
      res.set_content(pb::ExportTraceServiceResponse().SerializeAsString(), "application/x-protobuf");
    });
    port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Receiver() {
    server.stop();
    thread.join();
  }
};

template <class F>
bool eventually(F done, int ms = 5000) {
  for (int i = 0; i < ms / 10; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace

TEST_CASE("Retry-After and the backoff") {
  CHECK(parse_retry_after("3") == 3'000'000'000);
  CHECK(parse_retry_after("0") == 0);
  CHECK_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
  CHECK_FALSE(parse_retry_after("-1"));
  CHECK(parse_retry_after("999999") == 60'000'000'000);
  CHECK(retry_delay_ns(1, std::nullopt) == 250 * kMs);
  CHECK(retry_delay_ns(2, std::nullopt) == 500 * kMs);
  CHECK(retry_delay_ns(20, std::nullopt) == 8000 * kMs);
  CHECK(retry_delay_ns(1, 2'000'000'000) == 2'000'000'000);
}

TEST_CASE("every span arrives in batches, with the headers, gzip when asked") {
  Receiver receiver(0, 200);
  auto s = settings_for(receiver.port);
  s.max_batch = 100;
  s.gzip = true;
  s.headers = {{"x-tenant", "blue"}};
  auto exporter = OtlpExporter::create(s, "1");
  REQUIRE(exporter);
  (*exporter)->start();
  (*exporter)->offer(spans(250));
  CHECK(eventually([&] { return (*exporter)->report().exported == 250; }));
  CHECK(receiver.spans == 250);
  CHECK(receiver.requests >= 3);
  CHECK(receiver.content_type == "application/x-protobuf");
  CHECK(receiver.tenant == "blue");
  CHECK(receiver.saw_gzip);
  (*exporter)->stop();
  const auto r = (*exporter)->report();
  CHECK(r.offered == 250);
  CHECK(r.requests_failed == 0);
  for (auto d : r.dropped) CHECK(d == 0);
}

TEST_CASE("a few spans offered while the thread waits leave within the batch delay") {
  Receiver receiver(0, 200);
  auto exporter = OtlpExporter::create(settings_for(receiver.port), "1");
  REQUIRE(exporter);
  (*exporter)->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the thread is waiting now
  (*exporter)->offer(spans(3));
  CHECK(eventually([&] { return (*exporter)->report().exported == 3; }, 1000));
}

TEST_CASE("503 with Retry-After is retried and counted; nothing is lost") {
  Receiver receiver(3, 503, "0");
  auto exporter = OtlpExporter::create(settings_for(receiver.port), "1");
  REQUIRE(exporter);
  (*exporter)->start();
  (*exporter)->offer(spans(10));
  CHECK(eventually([&] { return (*exporter)->report().exported == 10; }));
  const auto r = (*exporter)->report();
  CHECK(r.retries == 3);
  CHECK(r.requests_failed == 3);
  CHECK(r.requests_ok == 1);
  CHECK(r.last_error.find("503") != std::string::npos);
}

TEST_CASE("a status that must not be retried drops the batch as rejected; a storm past the attempts as exhausted") {
  {
    Receiver receiver(100, 400);
    auto exporter = OtlpExporter::create(settings_for(receiver.port), "1");
    REQUIRE(exporter);
    (*exporter)->start();
    (*exporter)->offer(spans(5));
    CHECK(eventually([&] { return (*exporter)->report().dropped[static_cast<int>(OtlpDrop::rejected)] == 5; }));
    CHECK(receiver.requests == 1);
  }
  {
    Receiver receiver(100, 429, "0");
    auto exporter = OtlpExporter::create(settings_for(receiver.port), "1");
    REQUIRE(exporter);
    (*exporter)->start();
    (*exporter)->offer(spans(5));
    CHECK(
        eventually([&] { return (*exporter)->report().dropped[static_cast<int>(OtlpDrop::retries_exhausted)] == 5; }));
    CHECK(receiver.requests == 4);  // max_attempts
  }
}

TEST_CASE("a dead receiver: offer never waits, the queue's overflow and the rest at stop are counted") {
  int port = 0;
  {
    Receiver gone(0, 200);  // a port that was just free, and is closed again
    port = gone.port;
  }
  auto s = settings_for(port);
  s.max_queue = 100;
  s.max_batch = 10;
  auto exporter = OtlpExporter::create(s, "1");
  REQUIRE(exporter);
  (*exporter)->start();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) (*exporter)->offer(spans(10));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took < std::chrono::milliseconds(200));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*exporter)->stop();
  const auto r = (*exporter)->report();
  std::uint64_t accounted = r.exported + r.sampled_out + r.queued + r.sending;
  for (auto d : r.dropped) accounted += d;
  CHECK(r.offered == 500);
  CHECK(accounted == 500);
  CHECK(r.dropped[static_cast<int>(OtlpDrop::queue_full)] >= 390);
  CHECK(r.exported == 0);
  CHECK(r.requests_failed >= 1);
}

TEST_CASE("a receiver that accepts and never answers: the request times out and is counted, stop is quick") {
  // Listening but never accepting: the kernel completes the connection, nobody reads or answers.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 16) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  auto s = settings_for(ntohs(address.sin_port));
  s.timeout_ns = 300 * kMs;
  auto exporter = OtlpExporter::create(s, "1");
  REQUIRE(exporter);
  (*exporter)->start();
  (*exporter)->offer(spans(5));
  CHECK(eventually([&] { return (*exporter)->report().requests_failed >= 1; }, 3000));
  CHECK((*exporter)->report().last_error.find("no answer") != std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  (*exporter)->stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  CHECK((*exporter)->report().dropped[static_cast<int>(OtlpDrop::shutdown)] == 5);
  ::close(listener);
}

TEST_CASE("an unreadable CA file fails the start") {
  auto s = settings_for(1);
  s.url.tls = true;
  s.ca_file = "/nonexistent/ca.pem";
  auto exporter = OtlpExporter::create(s, "1");
  CHECK_FALSE(exporter);
  CHECK(exporter.error.find("/nonexistent/ca.pem") != std::string::npos);
}

TEST_CASE("--otlp-metrics: snapshots go to /v1/metrics on the same thread, retried like spans, every one counted") {
  httplib::Server server;
  std::atomic<int> requests{0}, points{0};
  server.Post("/v1/metrics", [&](const httplib::Request& req, httplib::Response& res) {
    if (++requests <= 2) {  // a short storm
      res.status = 503;
      res.set_header("Retry-After", "0");
      return;
    }
    pb::ExportMetricsServiceRequest request;
    if (!request.ParseFromString(req.body)) {
      res.status = 400;
      return;
    }
    for (const auto& m : request.resource_metrics(0).scope_metrics(0).metrics()) points += m.gauge().data_points_size();
    pb::ExportMetricsServiceResponse response;
    response.mutable_partial_success()->set_rejected_data_points(1);
    res.set_content(response.SerializeAsString(), "application/x-protobuf");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  auto s = settings_for(port);
  s.metrics_url = s.url;
  s.metrics_url->path = "/v1/metrics";
  s.max_metric_snapshots = 1;
  auto exporter = OtlpExporter::create(s, "1");
  REQUIRE(exporter);
  REQUIRE((*exporter)->metrics_enabled());
  MetricsSnapshot snapshot;
  snapshot.time_unix_nano = 5;
  snapshot.pairs.resize(2);
  snapshot.pairs[0].health = 1;
  // Before the thread runs: the second does not fit the queue of one.
  (*exporter)->offer_metrics(snapshot);
  (*exporter)->offer_metrics(snapshot);
  (*exporter)->start();
  CHECK(eventually([&] { return (*exporter)->report().metrics->exported == 1; }));
  (*exporter)->stop();
  server.stop();
  thread.join();
  const auto m = *(*exporter)->report().metrics;
  CHECK(m.offered == 2);
  CHECK(m.dropped[static_cast<int>(OtlpDrop::queue_full)] == 1);
  CHECK(m.requests_failed == 2);
  CHECK(m.retries == 2);
  CHECK(m.requests_ok == 1);
  CHECK(points == 3);  // health of one pair, the state of both
  CHECK(m.data_points_exported == 2);
  CHECK(m.data_points_rejected == 1);
  std::uint64_t accounted = m.exported + m.queued + m.sending;
  for (auto d : m.dropped) accounted += d;
  CHECK(accounted == m.offered);
  CHECK((*exporter)->report().offered == 0);  // no span was involved
}
