#include "health/health_tracker.hpp"

#include <algorithm>

namespace skewscope {

const char* pair_state_name(PairState s) {
  switch (s) {
    case PairState::ok: return "ok";
    case PairState::at_risk: return "at_risk";
    case PairState::violated: return "violated";
    case PairState::unknown: return "unknown";
  }
  return "unknown";
}

PairState decide_state(const WindowTotals& window, bool at_risk, CaptureCoverage coverage) {
  if (!coverage.up) return PairState::unknown;
  if (window.negative_spans > 0) return PairState::violated;
  if (!coverage.complete) return PairState::unknown;
  if (at_risk) return PairState::at_risk;
  if (window.spans == 0) return PairState::unknown;
  return PairState::ok;
}

std::optional<int> decide_health(const WindowTotals& window, CaptureCoverage coverage) {
  if (!coverage.up) return std::nullopt;
  if (window.negative_spans > 0) return 0;
  if (!coverage.complete) return std::nullopt;
  return 1;
}

namespace {
std::size_t buckets_for(std::int64_t window_ns, std::int64_t bucket_ns) {
  // Enough buckets to cover the window even when it is not a whole number of buckets.
  return static_cast<std::size_t>((window_ns + bucket_ns - 1) / bucket_ns);
}
}  // namespace

HealthTracker::HealthTracker(std::int64_t window_ns, std::int64_t bucket_ns)
    : window_ns_(window_ns),
      bucket_ns_(bucket_ns > 0 ? bucket_ns : 1),
      losses_(bucket_ns_, buckets_for(window_ns_, bucket_ns_)) {}

void HealthTracker::add(const Span& span, std::optional<std::int64_t> clock_bound_ns) {
  PairKey key{span.src, span.dst, span.transport};
  auto it = pairs_.find(key);
  if (it == pairs_.end()) {
    it = pairs_.emplace(key, PairData{PairWindow(bucket_ns_, buckets_for(window_ns_, bucket_ns_)), {}}).first;
  }
  it->second.histograms.observe(span.span_ns());
  // With true delay >= 0, a span of -m means the clocks disagree by at least m.
  const bool unexplained = span.span_ns() < 0 && clock_bound_ns && -span.span_ns() > *clock_bound_ns;
  it->second.window.add(span.capture_ns, span.span_ns(), unexplained);
}

HealthReport HealthTracker::report(std::int64_t now_ns, const std::function<bool(const PairKey&)>& at_risk) const {
  HealthReport r;
  r.window_ns = window_ns_;
  r.capture_up = capture_up_;
  r.window_lost_halves = losses_.in_window(now_ns);
  const CaptureCoverage coverage{capture_up_, r.window_lost_halves == 0};
  bool any_violated = false;
  for (const auto& [key, data] : pairs_) {
    const PairWindow& window = data.window;
    PairReport p;
    p.key = key;
    p.spans = window.spans();
    p.negative_spans = window.negative_spans();
    p.unexplained_negative_spans = window.unexplained_negative_spans();
    p.window = window.window(now_ns);
    p.histograms = data.histograms;
    p.negative_span_ratio =
        p.window.spans ? static_cast<double>(p.window.negative_spans) / static_cast<double>(p.window.spans) : 0.0;
    p.window_lost_halves = r.window_lost_halves;
    p.capture_complete = coverage.up && coverage.complete;
    if (p.window.newest_capture_ns)
      p.last_span_age_ns = std::max<std::int64_t>(0, now_ns - *p.window.newest_capture_ns);
    p.state = decide_state(p.window, at_risk && at_risk(key), coverage);
    p.health = decide_health(p.window, coverage);
    any_violated = any_violated || p.health == 0;
    r.pairs.push_back(p);
  }
  // Overall: a violation seen is certain; otherwise 1 only if nothing (in any pair, seen or not)
  // can have been missed.
  if (!coverage.up)
    r.health = std::nullopt;
  else if (any_violated)
    r.health = 0;
  else if (!coverage.complete)
    r.health = std::nullopt;
  else
    r.health = 1;
  return r;
}

}  // namespace skewscope
