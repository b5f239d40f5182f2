// Where and how the agent exports spans over OTLP/HTTP: from --otlp-* flags and the environment
// variables the OpenTelemetry SDKs read (docs/otlp.md). Pure: the environment is a function, so
// tests give their own; every bad value is an error that names the flag or variable at fault.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope::otlp {

struct OtlpFlags {
  std::string endpoint;     // --otlp-endpoint: base URL, /v1/traces is appended
  std::string sample;       // --otlp-sample 1/N; empty: 1/1
  std::string compression;  // --otlp-compression gzip|none; empty: environment, else none
  std::string ca_file;      // --otlp-ca-file; empty: environment, else the system's CAs
  std::string timeout;      // --otlp-timeout DURATION; empty: environment, else 10 s
  bool metrics = false;     // --otlp-metrics: the pairs' gauges to …/v1/metrics too
};

struct OtlpUrl {
  bool tls = false;
  std::string host;  // as written (an IPv6 literal keeps its brackets)
  int port = 0;
  std::string path;  // starts with '/'

  std::string origin() const;  // scheme://host:port, what the HTTP client is built with
  std::string text() const { return origin() + path; }
};

using Attributes = std::vector<std::pair<std::string, std::string>>;

struct OtlpSettings {
  OtlpUrl url;
  Attributes headers;   // sent with every request (OTEL_EXPORTER_OTLP_[TRACES_]HEADERS)
  Attributes resource;  // service.name first, then host.name and OTEL_RESOURCE_ATTRIBUTES
  bool gzip = false;
  std::string ca_file;
  std::int64_t timeout_ns = 10'000'000'000;
  std::uint32_t sample_one_in = 1;
  // Bounds: the queue holds at most this many spans (then new ones are dropped, counted); a
  // request carries at most max_batch spans and leaves at the latest batch_delay after its first.
  std::size_t max_queue = 8192;
  std::size_t max_batch = 512;
  std::int64_t batch_delay_ns = 1'000'000'000;
  int max_attempts = 6;  // of one batch, on 429/502/503/504 or no connection

  // --otlp-metrics: where the gauges go (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as it is, else the
  // base endpoint + /v1/metrics), with the general and the metrics-specific headers; a snapshot
  // every metrics_interval_ns (OTEL_METRIC_EXPORT_INTERVAL, milliseconds, as the SDKs read it).
  // At most max_metric_snapshots wait; a newer one beyond that is dropped (queue_full).
  std::optional<OtlpUrl> metrics_url;
  Attributes metrics_headers;
  std::int64_t metrics_interval_ns = 60'000'000'000;
  std::size_t max_metric_snapshots = 4;
};

using Environment = std::function<std::optional<std::string>(const char* name)>;
Environment process_environment();

// nullopt: no endpoint anywhere, export off. The flag wins over OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// (used as it is), which wins over OTEL_EXPORTER_OTLP_ENDPOINT (a base, like the flag).
Result<std::optional<OtlpSettings>> plan_otlp(const OtlpFlags& flags, const Environment& env,
                                              const std::string& host_name);

// Pieces, for the tests.
Result<OtlpUrl> parse_otlp_url(const std::string& text);
// "k1=v1,k2=v2" with percent-encoded values (the W3C Baggage form the SDKs read).
Result<Attributes> parse_key_values(const std::string& text);
Result<std::uint32_t> parse_sample(const std::string& text);  // "1/N", N >= 1

}  // namespace skewscope::otlp
