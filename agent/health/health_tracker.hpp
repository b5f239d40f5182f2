// causality_health per (src, dst, transport) and overall, over a sliding window
// (default 30 s, the published definition: 1 when no negative span was seen in the window).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "health/pair_window.hpp"
#include "health/span_histogram.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

enum class PairState { ok, at_risk, violated, unknown };
const char* pair_state_name(PairState s);

struct PairKey {
  DomainId src = 0;
  DomainId dst = 0;
  Transport transport = Transport::tcp;
  auto operator<=>(const PairKey&) const = default;
};

struct PairReport {
  PairKey key;
  std::uint64_t spans = 0;
  std::uint64_t negative_spans = 0;
  // Negative spans deeper than the sum of both hosts' clock error bounds: the clock sources
  // claimed an accuracy the traffic disproves. The most important alarm.
  std::uint64_t unexplained_negative_spans = 0;
  WindowTotals window;
  SpanHistograms histograms;       // cumulative, like the counters
  double negative_span_ratio = 0;  // over the window; 0 when the window is empty
  int health = 1;
  PairState state = PairState::unknown;
};

struct HealthReport {
  int health = 1;                 // 0 when any pair is violated
  std::int64_t window_ns = 0;
  std::vector<PairReport> pairs;  // ordered by (src, dst, transport)
};

// The state rule in one place. `at_risk` comes from the estimate and clock stages.
PairState decide_state(const WindowTotals& window, bool at_risk);

class HealthTracker {
 public:
  explicit HealthTracker(std::int64_t window_ns, std::int64_t bucket_ns = 1'000'000'000);

  // `clock_bound_ns`: sum of the two hosts' clock error bounds, when both are known.
  void add(const Span& span, std::optional<std::int64_t> clock_bound_ns = std::nullopt);
  // `at_risk` says, per pair, whether the estimate or the clock sources put it at risk.
  HealthReport report(std::int64_t now_ns, const std::function<bool(const PairKey&)>& at_risk = {}) const;
  std::int64_t window_ns() const { return window_ns_; }

 private:
  std::int64_t window_ns_;
  std::int64_t bucket_ns_;
  struct PairData {
    PairWindow window;
    SpanHistograms histograms;
  };
  std::map<PairKey, PairData> pairs_;
};

}  // namespace skewscope
