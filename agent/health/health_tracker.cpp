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

const char* unknown_reason_name(UnknownReason r) {
  switch (r) {
    case UnknownReason::none: return "none";
    case UnknownReason::capture_down: return "capture_down";
    case UnknownReason::halves_lost: return "halves_lost";
    case UnknownReason::no_spans: return "no_spans_in_window";
    case UnknownReason::halves_unpaired: return "halves_unpaired";
    case UnknownReason::window_filling: return "window_filling";
    case UnknownReason::no_pairs: return "no_pair_known";
  }
  return "none";
}

// One order for every verdict: capture down hides everything; a violation seen is certain; then
// what could hide one (losses, unpaired halves); then at_risk; and without a span, no evidence.
UnknownReason decide_unknown_reason(const WindowTotals& window, CaptureCoverage coverage, bool unpaired) {
  if (!coverage.up) return UnknownReason::capture_down;
  if (window.negative_spans > 0) return UnknownReason::none;
  if (!coverage.complete) return UnknownReason::halves_lost;
  if (unpaired) return UnknownReason::halves_unpaired;
  if (window.spans == 0) return UnknownReason::no_spans;
  return UnknownReason::none;
}

PairState decide_state(const WindowTotals& window, bool at_risk, CaptureCoverage coverage, bool unpaired) {
  if (!coverage.up) return PairState::unknown;
  if (window.negative_spans > 0) return PairState::violated;
  if (!coverage.complete || unpaired || window.spans == 0) return PairState::unknown;
  return at_risk ? PairState::at_risk : PairState::ok;
}

std::optional<int> decide_health(const WindowTotals& window, CaptureCoverage coverage, bool unpaired) {
  if (decide_unknown_reason(window, coverage, unpaired) != UnknownReason::none) return std::nullopt;
  return window.negative_spans > 0 ? 0 : 1;
}

void decide_overall(HealthReport& r) {
  bool any_violated = false, any_known = false;
  for (const auto& p : r.pairs) {
    any_violated = any_violated || p.health == 0;
    any_known = any_known || p.health == 1;
  }
  bool unpaired = false;
  for (const auto& d : r.pairing) unpaired = unpaired || d.below_floor;
  r.health = std::nullopt;
  if (!r.capture_up)
    r.unknown_reason = UnknownReason::capture_down;
  else if (any_violated)
    r.unknown_reason = UnknownReason::none;
  else if (r.window_lost_halves > 0)
    r.unknown_reason = UnknownReason::halves_lost;
  else if (unpaired)
    r.unknown_reason = UnknownReason::halves_unpaired;
  else if (!any_known)
    r.unknown_reason = UnknownReason::no_pairs;
  else
    r.unknown_reason = UnknownReason::none;
  if (r.unknown_reason == UnknownReason::none) r.health = any_violated ? 0 : 1;
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
    it = pairs_.emplace(key, PairData{PairWindow(bucket_ns_, buckets_for(window_ns_, bucket_ns_)), {}, std::nullopt})
             .first;
  }
  const std::uint64_t times = span.messages;
  it->second.histograms.observe(span.span_ns(), times);
  auto& newest = it->second.newest_capture_ns;
  newest = newest ? std::max(*newest, span.capture_ns) : span.capture_ns;
  // With true delay >= 0, a span of -m means the clocks disagree by at least m.
  const bool unexplained = span.span_ns() < 0 && clock_bound_ns && -span.span_ns() > *clock_bound_ns;
  it->second.window.add(span.capture_ns, span.span_ns(), unexplained, times);
}

HealthReport HealthTracker::report(std::int64_t now_ns, const std::function<bool(const PairKey&)>& at_risk,
                                   std::vector<DomainPairing> pairing) const {
  HealthReport r;
  r.window_ns = window_ns_;
  r.capture_up = capture_up_;
  r.window_lost_halves = losses_.in_window(now_ns);
  r.pairing = std::move(pairing);
  auto below_floor = [&r](DomainId domain) {
    for (const auto& d : r.pairing)
      if (d.domain == domain) return d.below_floor;
    return false;
  };
  const CaptureCoverage coverage{capture_up_, r.window_lost_halves == 0};
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
    // Kept after the window empties: how long a pair has been silent is what matters then.
    if (data.newest_capture_ns) p.last_span_age_ns = std::max<std::int64_t>(0, now_ns - *data.newest_capture_ns);
    const bool unpaired = below_floor(key.src) || below_floor(key.dst);
    p.state = decide_state(p.window, at_risk && at_risk(key), coverage, unpaired);
    p.health = decide_health(p.window, coverage, unpaired);
    p.unknown_reason = decide_unknown_reason(p.window, coverage, unpaired);
    r.pairs.push_back(p);
  }
  decide_overall(r);
  return r;
}

}  // namespace skewscope
