#include "health/health_tracker.hpp"

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

PairState decide_state(const WindowTotals& window, bool at_risk) {
  if (window.negative_spans > 0) return PairState::violated;
  if (at_risk) return PairState::at_risk;
  if (window.spans == 0) return PairState::unknown;
  return PairState::ok;
}

HealthTracker::HealthTracker(std::int64_t window_ns, std::int64_t bucket_ns)
    : window_ns_(window_ns), bucket_ns_(bucket_ns > 0 ? bucket_ns : 1) {}

void HealthTracker::add(const Span& span, std::optional<std::int64_t> clock_bound_ns) {
  PairKey key{span.src, span.dst, span.transport};
  auto it = pairs_.find(key);
  if (it == pairs_.end()) {
    // Enough buckets to cover the window even when it is not a whole number of buckets.
    auto buckets = static_cast<std::size_t>((window_ns_ + bucket_ns_ - 1) / bucket_ns_);
    it = pairs_.emplace(key, PairData{PairWindow(bucket_ns_, buckets), {}}).first;
  }
  it->second.histograms.observe(span.span_ns());
  // With true delay >= 0, a span of -m means the clocks disagree by at least m.
  const bool unexplained = span.span_ns() < 0 && clock_bound_ns && -span.span_ns() > *clock_bound_ns;
  it->second.window.add(span.capture_ns, span.span_ns(), unexplained);
}

HealthReport HealthTracker::report(std::int64_t now_ns, const std::function<bool(const PairKey&)>& at_risk) const {
  HealthReport r;
  r.window_ns = window_ns_;
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
    p.state = decide_state(p.window, at_risk && at_risk(key));
    p.health = p.state == PairState::violated ? 0 : 1;
    if (p.health == 0) r.health = 0;
    r.pairs.push_back(p);
  }
  return r;
}

}  // namespace skewscope
