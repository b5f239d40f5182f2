// The OTLP/HTTP trace exporter: a bounded queue filled by offer() (which never waits, so the
// agent's threads are never held by a slow or dead receiver) and a thread of its own that sends
// batches as POST …/v1/traces (application/x-protobuf, optionally gzip), retrying 429/502/503/504
// and failed connections with backoff, honouring Retry-After. Every span offered ends up in one
// counter of OtlpReport.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "otlp/metric_export.hpp"
#include "otlp/otlp_report.hpp"
#include "otlp/otlp_settings.hpp"
#include "otlp/span_export.hpp"
#include "skewscope/result.hpp"

namespace httplib {
class Client;
}

namespace skewscope::otlp {

// How long to wait before attempt `attempt` (1 = the first retry): Retry-After when the receiver
// gave one (capped), else 250 ms doubling up to 8 s.
std::int64_t retry_delay_ns(int attempt, std::optional<std::int64_t> retry_after_ns);
// Retry-After in delay-seconds; nullopt for anything else (an HTTP date is not honoured: the
// backoff applies).
std::optional<std::int64_t> parse_retry_after(const std::string& value);

class OtlpExporter {
 public:
  // Fails when the TLS CA file cannot be read.
  static Result<std::unique_ptr<OtlpExporter>> create(OtlpSettings settings, std::string version);
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void start();
  // Stops the thread: an attempt under way is cut off, spans still queued are dropped (shutdown).
  void stop();

  // Samples, then queues; a span that does not fit is dropped (queue_full). Never blocks on I/O.
  void offer(std::vector<ExportSpan>&& spans);
  // Spans the feed knows were paired but could not read any more (the recent-span ring wrapped).
  void count_overrun(std::uint64_t spans);
  // --otlp-metrics: queues one snapshot of the pairs' gauges, sent by the same thread (between
  // span batches) to …/v1/metrics; one that does not fit is dropped (queue_full). Never blocks.
  void offer_metrics(MetricsSnapshot snapshot);
  bool metrics_enabled() const { return settings_.metrics_url.has_value(); }

  OtlpReport report() const;
  const OtlpSettings& settings() const { return settings_; }

 private:
  OtlpExporter(OtlpSettings settings, std::string version, std::unique_ptr<httplib::Client> client,
               std::unique_ptr<httplib::Client> metrics_client);
  void run();
  void run_batches();
  // One batch until it is accepted, refused, out of attempts, or the exporter stops.
  void send(std::vector<ExportSpan>& batch);
  void send_metrics(const MetricsSnapshot& snapshot);
  // One request body until it is accepted (2xx: its response body in `response`), refused, out of
  // attempts, or the exporter stops; each attempt counted in `counts` (OtlpReport or its Metrics).
  enum class PostEnd { accepted, rejected, retries_exhausted, shutdown };
  static OtlpDrop drop_reason(PostEnd failed);
  template <class Counts>
  PostEnd post(httplib::Client& client, const OtlpUrl& url, const Attributes& extra_headers, std::string body,
               Counts& counts, std::string& response);
  void drop(OtlpDrop reason, std::uint64_t spans);
  bool wait_stopping(std::int64_t ns);  // true when stop() was called

  OtlpSettings settings_;
  std::string version_;
  std::unique_ptr<httplib::Client> client_;
  std::unique_ptr<httplib::Client> metrics_client_;  // --otlp-metrics only
  std::mt19937_64 ids_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ExportSpan> queue_;
  std::deque<MetricsSnapshot> metric_queue_;
  bool stopping_ = false;
  bool thread_done_ = false;
  OtlpReport report_;
  std::thread thread_;
};

}  // namespace skewscope::otlp
