// Each pair's verdict as OTLP gauges (--otlp-metrics, docs/otlp.md "Metrics"), and the encoding of
// one snapshot into an ExportMetricsServiceRequest. Pure: the values are gathered by the feed from
// the same report the status JSON renders, and the exporter thread sends what this encodes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "health/health_tracker.hpp"
#include "otlp/otlp_settings.hpp"
#include "otlp/span_export.hpp"

namespace skewscope::otlp {

// One pair of the status JSON's "pairs", the values its gauges carry; absent values are left out
// of the snapshot (no data point), never sent as 0.
struct PairGauges {
  std::string src, dst;  // domain names
  Transport transport = Transport::tcp;
  std::optional<int> health;  // causality_health: 1, 0, or unknown
  PairState state = PairState::unknown;
  std::optional<double> offset_s, offset_bound_s, delta_t_min_s;  // seconds
};

// A snapshot of every pair at one instant (CLOCK_REALTIME, ns since the epoch).
struct MetricsSnapshot {
  std::vector<PairGauges> pairs;
  std::int64_t time_unix_nano = 0;
};

// The metric names, for the docs and tests: skewscope.pair.causality_health (1), .state (1 for
// the pair's current state, its name in skewscope.state), .offset, .offset_bound, .delta_t_min (s).
std::size_t data_points(const MetricsSnapshot& snapshot);

std::string encode_metrics_request(const MetricsSnapshot& snapshot, const ExportIdentity& identity);

// The receiver's ExportMetricsServiceResponse: data points it says it rejected (partial success).
std::int64_t rejected_data_points(const std::string& response_body);

}  // namespace skewscope::otlp
