// What the OTLP trace exporter did (--otlp-endpoint): the counters /metrics shows as
// skewscope_otlp_* and the status as "otlp". Every span the exporter was offered is exported,
// sampled out, still queued, or dropped for one of these reasons.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace skewscope::otlp {

enum class OtlpDrop : std::uint8_t {
  queue_full,         // the exporter's queue was full (the receiver is slow or down)
  overrun,            // more spans paired between two reads of the agent than its recent-span ring holds
  retries_exhausted,  // 429/502/503/504 or no connection, every attempt of the batch
  rejected,           // the receiver refused the batch with a status that must not be retried
  partial_rejected,   // the receiver accepted the batch but said it rejected these (partial_success)
  shutdown,           // still queued when the agent stopped
  count_
};

inline const char* otlp_drop_name(OtlpDrop d) {
  switch (d) {
    case OtlpDrop::queue_full: return "queue_full";
    case OtlpDrop::overrun: return "overrun";
    case OtlpDrop::retries_exhausted: return "retries_exhausted";
    case OtlpDrop::rejected: return "rejected";
    case OtlpDrop::partial_rejected: return "partial_rejected";
    case OtlpDrop::shutdown: return "shutdown";
    case OtlpDrop::count_: break;
  }
  return "unknown";
}

struct OtlpReport {
  std::string url;                // where the spans go (…/v1/traces)
  std::uint64_t offered = 0;      // paired spans the exporter saw
  std::uint64_t sampled_out = 0;  // not sent by --otlp-sample (never negative or at-risk spans)
  std::uint64_t exported = 0;     // accepted by the receiver
  std::array<std::uint64_t, static_cast<std::size_t>(OtlpDrop::count_)> dropped{};
  std::uint64_t requests_ok = 0;      // POSTs answered 2xx
  std::uint64_t requests_failed = 0;  // POSTs that failed (any status or no answer), retried or not
  std::uint64_t retries = 0;          // attempts after the first, over all batches
  std::size_t queued = 0;             // spans waiting now
  std::size_t sending = 0;            // spans of the batch under way (retries included)
  std::string last_error;             // the last failure, for an operator; empty if none yet

  // --otlp-metrics: the gauge snapshots, counted like the spans (every snapshot offered is
  // exported, queued, under way, or dropped by one reason of OtlpDrop; overrun, sampled out and
  // partial_rejected do not apply to a snapshot: rejected data points are counted on their own).
  struct Metrics {
    std::string url;  // …/v1/metrics
    std::uint64_t offered = 0;
    std::uint64_t exported = 0;
    std::array<std::uint64_t, static_cast<std::size_t>(OtlpDrop::count_)> dropped{};
    std::uint64_t data_points_exported = 0;
    std::uint64_t data_points_rejected = 0;  // partial_success.rejected_data_points
    std::uint64_t requests_ok = 0;
    std::uint64_t requests_failed = 0;
    std::uint64_t retries = 0;
    std::size_t queued = 0;
    std::size_t sending = 0;
    std::string last_error;
  };
  std::optional<Metrics> metrics;
};

}  // namespace skewscope::otlp
