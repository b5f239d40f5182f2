#include "otlp/otlp_exporter.hpp"

#include <httplib.h>

#include <charconv>
#include <chrono>

namespace skewscope::otlp {
namespace {

constexpr std::int64_t kFirstBackoffNs = 250'000'000;
constexpr std::int64_t kMaxBackoffNs = 8'000'000'000;
constexpr std::int64_t kMaxRetryAfterNs = 60'000'000'000;

std::chrono::microseconds to_us(std::int64_t ns) { return std::chrono::microseconds(ns / 1000); }

bool retryable(int status) { return status == 429 || status == 502 || status == 503 || status == 504; }

// What an operator needs to hear when there was no HTTP answer; a TLS refusal is named as one.
std::string no_answer_message(const std::string& url, httplib::Error error) {
  switch (error) {
    case httplib::Error::SSLServerVerification:
      return "the certificate of " + url + " is not signed by a trusted CA (--otlp-ca-file)";
    case httplib::Error::SSLLoadingCerts: return "cannot load the trusted CA certificates for " + url;
    case httplib::Error::SSLConnection: return "TLS handshake with " + url + " failed";
    default: return "no answer from " + url + ": " + httplib::to_string(error);
  }
}

}  // namespace

std::optional<std::int64_t> parse_retry_after(const std::string& value) {
  std::int64_t seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size() || seconds < 0) return std::nullopt;
  return seconds >= kMaxRetryAfterNs / 1'000'000'000 ? kMaxRetryAfterNs : seconds * 1'000'000'000;
}

std::int64_t retry_delay_ns(int attempt, std::optional<std::int64_t> retry_after_ns) {
  if (retry_after_ns) return std::min(*retry_after_ns, kMaxRetryAfterNs);
  std::int64_t delay = kFirstBackoffNs;
  for (int i = 1; i < attempt && delay < kMaxBackoffNs; ++i) delay *= 2;
  return std::min(delay, kMaxBackoffNs);
}

namespace {

Result<std::unique_ptr<httplib::Client>> make_client(const OtlpUrl& url, const OtlpSettings& settings) {
  using R = Result<std::unique_ptr<httplib::Client>>;
  auto client = std::make_unique<httplib::Client>(url.origin());
  if (url.tls) {
    if (!settings.ca_file.empty()) {
      if (FILE* f = std::fopen(settings.ca_file.c_str(), "r")) {
        std::fclose(f);
      } else {
        return R::fail("cannot read the CA file " + settings.ca_file);
      }
      client->set_ca_cert_path(settings.ca_file.c_str());
    }
    client->enable_server_certificate_verification(true);
  }
  const auto timeout = to_us(settings.timeout_ns);
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_keep_alive(true);
  return R::ok(std::move(client));
}

}  // namespace

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::create(OtlpSettings settings, std::string version) {
  using R = Result<std::unique_ptr<OtlpExporter>>;
  auto client = make_client(settings.url, settings);
  if (!client) return R::fail(client.error);
  std::unique_ptr<httplib::Client> metrics_client;
  if (settings.metrics_url) {
    auto made = make_client(*settings.metrics_url, settings);
    if (!made) return R::fail(made.error);
    metrics_client = std::move(*made);
  }
  return R::ok(std::unique_ptr<OtlpExporter>(
      new OtlpExporter(std::move(settings), std::move(version), std::move(*client), std::move(metrics_client))));
}

OtlpExporter::OtlpExporter(OtlpSettings settings, std::string version, std::unique_ptr<httplib::Client> client,
                           std::unique_ptr<httplib::Client> metrics_client)
    : settings_(std::move(settings)),
      version_(std::move(version)),
      client_(std::move(client)),
      metrics_client_(std::move(metrics_client)),
      ids_(std::random_device{}()) {
  report_.url = settings_.url.text();
  if (settings_.metrics_url) {
    report_.metrics.emplace();
    report_.metrics->url = settings_.metrics_url->text();
  }
}

OtlpExporter::~OtlpExporter() { stop(); }

void OtlpExporter::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void OtlpExporter::stop() {
  {
    std::lock_guard guard(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    // Cuts off a request under way (a receiver that never answers); again until the thread is
    // out, since a request may have started just after one cut.
    std::unique_lock lock(mutex_);
    while (!thread_done_) {
      lock.unlock();
      client_->stop();
      if (metrics_client_) metrics_client_->stop();
      lock.lock();
      wake_.wait_for(lock, std::chrono::milliseconds(20), [this] { return thread_done_; });
    }
    lock.unlock();
    thread_.join();
  }
  std::lock_guard guard(mutex_);
  report_.dropped[static_cast<std::size_t>(OtlpDrop::shutdown)] += queue_.size();
  queue_.clear();
  report_.queued = 0;
  if (report_.metrics) {
    report_.metrics->dropped[static_cast<std::size_t>(OtlpDrop::shutdown)] += metric_queue_.size();
    metric_queue_.clear();
    report_.metrics->queued = 0;
  }
}

void OtlpExporter::offer(std::vector<ExportSpan>&& spans) {
  bool wake = false;
  {
    std::lock_guard guard(mutex_);
    const std::size_t queued_before = queue_.size();
    for (auto& s : spans) {
      ++report_.offered;
      if (!keep_span(s, settings_.sample_one_in)) {
        ++report_.sampled_out;
      } else if (stopping_) {
        ++report_.dropped[static_cast<std::size_t>(OtlpDrop::shutdown)];
      } else if (queue_.size() >= settings_.max_queue) {
        ++report_.dropped[static_cast<std::size_t>(OtlpDrop::queue_full)];
      } else {
        queue_.push_back(std::move(s));
      }
    }
    // The thread waits for the first span of a batch, then for a full batch or the delay.
    wake = queue_.size() > queued_before;
    report_.queued = queue_.size();
  }
  if (wake) wake_.notify_all();
}

void OtlpExporter::offer_metrics(MetricsSnapshot snapshot) {
  {
    std::lock_guard guard(mutex_);
    if (!report_.metrics) return;
    auto& m = *report_.metrics;
    ++m.offered;
    if (stopping_) {
      ++m.dropped[static_cast<std::size_t>(OtlpDrop::shutdown)];
      return;
    }
    if (metric_queue_.size() >= settings_.max_metric_snapshots) {
      ++m.dropped[static_cast<std::size_t>(OtlpDrop::queue_full)];
      return;
    }
    metric_queue_.push_back(std::move(snapshot));
    m.queued = metric_queue_.size();
  }
  wake_.notify_all();
}

void OtlpExporter::count_overrun(std::uint64_t spans) {
  std::lock_guard guard(mutex_);
  report_.offered += spans;
  report_.dropped[static_cast<std::size_t>(OtlpDrop::overrun)] += spans;
}

OtlpReport OtlpExporter::report() const {
  std::lock_guard guard(mutex_);
  return report_;
}

void OtlpExporter::drop(OtlpDrop reason, std::uint64_t spans) {
  std::lock_guard guard(mutex_);
  report_.dropped[static_cast<std::size_t>(reason)] += spans;
  report_.sending = 0;
}

bool OtlpExporter::wait_stopping(std::int64_t ns) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, std::chrono::nanoseconds(ns), [this] { return stopping_; });
  return stopping_;
}

void OtlpExporter::run() {
  run_batches();
  std::lock_guard guard(mutex_);
  thread_done_ = true;
  wake_.notify_all();
}

void OtlpExporter::run_batches() {
  std::vector<ExportSpan> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      // A batch leaves when it is full, or batch_delay after the queue stopped being empty. A
      // metrics snapshot leaves at once, between batches.
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty() || !metric_queue_.empty(); });
      if (stopping_) return;
      if (!metric_queue_.empty()) {
        MetricsSnapshot snapshot = std::move(metric_queue_.front());
        metric_queue_.pop_front();
        report_.metrics->queued = metric_queue_.size();
        report_.metrics->sending = 1;
        lock.unlock();
        send_metrics(snapshot);
        continue;
      }
      wake_.wait_for(lock, std::chrono::nanoseconds(settings_.batch_delay_ns),
                     [this] { return stopping_ || queue_.size() >= settings_.max_batch || !metric_queue_.empty(); });
      if (stopping_) return;
      const std::size_t n = std::min(queue_.size(), settings_.max_batch);
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
      queue_.erase(queue_.begin(), queue_.begin() + n);
      report_.queued = queue_.size();
      report_.sending = n;
    }
    send(batch);
  }
}

template <class Counts>
OtlpExporter::PostEnd OtlpExporter::post(httplib::Client& client, const OtlpUrl& url, const Attributes& extra_headers,
                                         std::string body, Counts& counts, std::string& response) {
  httplib::Headers headers;
  for (const auto& [k, v] : extra_headers) headers.emplace(k, v);
  if (settings_.gzip) {
    auto zipped = gzip(body);
    if (zipped) {
      body = std::move(*zipped);
      headers.emplace("Content-Encoding", "gzip");
    }
  }
  for (int attempt = 1;; ++attempt) {
    auto res = client.Post(url.path, headers, body, "application/x-protobuf");
    std::optional<std::int64_t> retry_after;
    std::string error;
    bool retry = false;
    if (!res) {
      error = no_answer_message(url.text(), res.error());
      retry = true;
    } else if (res->status >= 200 && res->status < 300) {
      response = res->body;
      std::lock_guard guard(mutex_);
      ++counts.requests_ok;
      return PostEnd::accepted;
    } else {
      error = url.text() + " answered " + std::to_string(res->status);
      retry = retryable(res->status);
      if (retry && res->has_header("Retry-After"))
        retry_after = parse_retry_after(res->get_header_value("Retry-After"));
    }
    {
      std::lock_guard guard(mutex_);
      ++counts.requests_failed;
      counts.last_error = error;
    }
    if (!retry) return PostEnd::rejected;
    if (attempt >= settings_.max_attempts) return PostEnd::retries_exhausted;
    if (wait_stopping(retry_delay_ns(attempt, retry_after))) return PostEnd::shutdown;
    std::lock_guard guard(mutex_);
    ++counts.retries;
  }
}

OtlpDrop OtlpExporter::drop_reason(PostEnd failed) {
  switch (failed) {
    case PostEnd::rejected: return OtlpDrop::rejected;
    case PostEnd::retries_exhausted: return OtlpDrop::retries_exhausted;
    case PostEnd::accepted:
    case PostEnd::shutdown: break;
  }
  return OtlpDrop::shutdown;
}

void OtlpExporter::send(std::vector<ExportSpan>& batch) {
  const std::uint64_t spans = batch.size();
  std::string body = encode_request(batch, ExportIdentity{settings_.resource, version_}, ids_);
  batch.clear();
  std::string response;
  const PostEnd end = post(*client_, settings_.url, settings_.headers, std::move(body), report_, response);
  if (end != PostEnd::accepted) return drop(drop_reason(end), spans);
  const std::int64_t rejected = std::clamp<std::int64_t>(rejected_spans(response), 0, static_cast<std::int64_t>(spans));
  std::lock_guard guard(mutex_);
  report_.sending = 0;
  report_.exported += spans - static_cast<std::uint64_t>(rejected);
  report_.dropped[static_cast<std::size_t>(OtlpDrop::partial_rejected)] += static_cast<std::uint64_t>(rejected);
}

void OtlpExporter::send_metrics(const MetricsSnapshot& snapshot) {
  const auto points = static_cast<std::int64_t>(data_points(snapshot));
  std::string body = encode_metrics_request(snapshot, ExportIdentity{settings_.resource, version_});
  std::string response;
  const PostEnd end = post(*metrics_client_, *settings_.metrics_url, settings_.metrics_headers, std::move(body),
                           *report_.metrics, response);
  std::lock_guard guard(mutex_);
  auto& m = *report_.metrics;
  m.sending = 0;
  if (end != PostEnd::accepted) {
    ++m.dropped[static_cast<std::size_t>(drop_reason(end))];
    return;
  }
  const std::int64_t rejected = std::clamp<std::int64_t>(rejected_data_points(response), 0, points);
  ++m.exported;
  m.data_points_exported += static_cast<std::uint64_t>(points - rejected);
  m.data_points_rejected += static_cast<std::uint64_t>(rejected);
}

}  // namespace skewscope::otlp
