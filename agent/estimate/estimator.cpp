#include "estimate/estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "estimate/interval.hpp"

namespace skewscope::estimate {
namespace {

constexpr double kNsPerPpm = 1000.0;  // 1 ppm of a second, in ns per second

Config sanitized(Config c) {
  c.buckets = std::clamp<std::size_t>(c.buckets, 1, 64);
  c.window_ns = std::max<std::int64_t>(c.window_ns, static_cast<std::int64_t>(c.buckets));
  c.max_drift_ppm = std::fabs(c.max_drift_ppm);
  return c;
}

// Constraints of the live buckets, with where each bucket's constraints start, so that "the newest
// k buckets" is a suffix of the vector.
struct ConstraintSet {
  std::vector<Constraint> all;
  std::vector<std::size_t> bucket_start;
};

ConstraintSet constraints_of(const std::vector<const Bucket*>& live, std::int64_t now_ns) {
  ConstraintSet set;
  for (const Bucket* b : live) {
    set.bucket_start.push_back(set.all.size());
    for (int d = 0; d < 2; ++d) {
      const DirectionBucket& db = b->dir[d];
      if (db.count == 0) continue;
      const double t = static_cast<double>(db.min_at_ns - now_ns) * 1e-9;
      // Direction 0 (low → high): θ ≤ span. Direction 1: θ ≥ −span.
      const double v = d == 0 ? static_cast<double>(db.min_span_ns) : -static_cast<double>(db.min_span_ns);
      set.all.push_back(Constraint{t, v, d == 0});
    }
  }
  return set;
}

}  // namespace

bool at_risk(double offset_ns, double bound_ns, double dt_min_ns, double share) {
  if (dt_min_ns <= 0) return true;  // no margin left at all
  // An interval that holds zero cannot say the clocks are apart at all: its midpoint may be a
  // path asymmetry (the bias the traffic cannot see), as with 13.6 ± 33.3 µs over the exchange.
  if (std::fabs(offset_ns) <= bound_ns) return false;
  return std::fabs(offset_ns) >= share * dt_min_ns;
}

Estimator::Estimator(Config config) : config_(sanitized(config)) {}

void Estimator::observe(const Span& span) {
  const std::uint64_t times = span.messages;
  if (span.src == span.dst) {
    counters_.same_domain_spans += times;
    return;
  }
  const std::uint32_t k = key(span.src, span.dst);
  auto it = pairs_.find(k);
  if (it == pairs_.end()) {
    if (pairs_.size() >= config_.max_pairs) {
      counters_.pair_table_full += times;
      return;
    }
    const std::int64_t bucket_ns = config_.window_ns / static_cast<std::int64_t>(config_.buckets);
    it = pairs_.emplace(k, PairState(PairWindow(bucket_ns, config_.buckets, config_.samples_per_bucket))).first;
  }
  const int direction = span.src < span.dst ? 0 : 1;
  if (!it->second.window.add(direction, span.span_ns(), span.capture_ns, times)) {
    counters_.late_spans += times;
    return;
  }
  counters_.spans += times;
}

PairEstimate Estimator::evaluate_canonical(const PairState& state, DomainId low, DomainId high, std::int64_t now_ns,
                                           bool* new_break) const {
  PairEstimate e;
  e.src = low;
  e.dst = high;
  e.evaluated_at_ns = now_ns;
  e.empty_interval_episodes = state.empty_episodes;

  const auto live = state.window.live(now_ns);
  e.buckets_live = live.size();
  const std::int64_t oldest_index =
      floor_div(now_ns, state.window.bucket_ns()) - static_cast<std::int64_t>(state.window.buckets()) + 1;
  e.window_filling = live.empty() || live.front()->index > oldest_index;
  for (const Bucket* b : live) {
    const DirectionBucket& f = b->dir[0];
    const DirectionBucket& r = b->dir[1];
    e.forward_spans += f.count;
    e.reverse_spans += r.count;
    e.forward_negative += f.negative;
    e.reverse_negative += r.negative;
    if (f.count && (!e.forward_min_span_ns || f.min_span_ns < *e.forward_min_span_ns))
      e.forward_min_span_ns = f.min_span_ns;
    if (r.count && (!e.reverse_min_span_ns || r.min_span_ns < *e.reverse_min_span_ns))
      e.reverse_min_span_ns = r.min_span_ns;
  }
  if (live.empty()) return e;

  const double rho_max = config_.max_drift_ppm * kNsPerPpm;
  const ConstraintSet set = constraints_of(live, now_ns);
  auto suffix = [&](std::size_t k) {  // constraints of the newest k buckets
    return std::span<const Constraint>(set.all).subspan(set.bucket_start[live.size() - k]);
  };

  std::size_t used = live.size();
  IntervalSolution sol = solve_interval(set.all, rho_max);
  // Once a break is found the window stays suspect until the data before it has aged out: a line
  // can later bend through the last pre-break buckets and the post-break ones (the window looks
  // consistent again) while extrapolating a lagging offset.
  const bool tainted = state.broken_through != kNoBucket && live.front()->index <= state.broken_through;
  if (new_break) *new_break = !sol.feasible && !tainted;
  if (!sol.feasible || tainted) {
    e.empty_interval = true;
    // Dropping old constraints can only enlarge the feasible set, so feasibility is monotone in
    // the suffix length and a binary search finds the longest consistent recent history.
    auto longest = [&](double lo, double hi) {
      std::size_t good = 0, bad = live.size();
      while (bad - good > 1) {
        const std::size_t mid = (good + bad) / 2;
        (solve_interval(suffix(mid), lo, hi).feasible ? good : bad) = mid;
      }
      return good;
    };
    auto hull_with = [&sol](const IntervalSolution& part) {
      if (sol.lower_ns && part.lower_ns) sol.lower_ns = std::min(*sol.lower_ns, *part.lower_ns);
      if (sol.upper_ns && part.upper_ns) sol.upper_ns = std::max(*sol.upper_ns, *part.upper_ns);
    };
    // Once the break was detected, the buckets begun after that tick hold only data from after
    // it: two or more of them that one line fits are a measurement, not a guess, and narrower
    // than the hull below (of which they are one member). A second change since then (they do
    // not fit) falls back to the hull.
    std::size_t after_break = 0;
    if (tainted)
      while (after_break < live.size() && live[live.size() - 1 - after_break]->index > state.broken_through)
        ++after_break;
    IntervalSolution fit_after_break;
    if (after_break >= 2 && rho_max > 0) fit_after_break = solve_interval(suffix(after_break), rho_max);
    if (fit_after_break.feasible && fit_after_break.lower_ns && fit_after_break.upper_ns) {
      used = after_break;
      sol = fit_after_break;
    } else {
      used = longest(-rho_max, rho_max);
      if (used == 0) return e;
      sol = solve_interval(suffix(used), rho_max);
      // When the break happened is unknown, and the longest consistent suffix is the least safe
      // guess: it still holds a few buckets from before the break, bent to fit, and extrapolates a
      // lagging line (after a change of frequency) or a too-steep one (after a step). Every shorter
      // suffix is another guess at the break; the hull of all of them holds the offset whichever is
      // right. The single newest bucket is left out once there are two, as its slope is free up to
      // max_drift and would make the hull needlessly wide: the break was at least a bucket ago.
      if (rho_max > 0)
        for (std::size_t k = std::min<std::size_t>(2, used); k < used; ++k)
          hull_with(solve_interval(suffix(k), rho_max));
      // After a step, holding the slope the window had pinned before (widened a little) explains
      // the data better than any bent line: include that fit too.
      if (state.settled_rho && rho_max > 0) {
        const auto [lo, hi] = *state.settled_rho;
        const double widen = std::max((hi - lo) / 2, kNsPerPpm);
        const double held_lo = std::max(-rho_max, lo - widen), held_hi = std::min(rho_max, hi + widen);
        if (const std::size_t held = longest(held_lo, held_hi))
          hull_with(solve_interval(suffix(held), held_lo, held_hi));
      }
    }
  }
  e.buckets_used = used;
  e.lower_ns = sol.lower_ns;
  e.upper_ns = sol.upper_ns;
  if (!sol.lower_ns || !sol.upper_ns) return e;  // one direction only: one-sided bound, no midpoint

  const double lo = *sol.lower_ns, hi = *sol.upper_ns;
  e.offset_ns = (lo + hi) / 2;
  e.bound_ns = (hi - lo) / 2;
  // Drift is reported only when the data pins it, not when the slope limit does, and not while
  // the window contradicts the linear model.
  const double slack = rho_max * 1e-9;
  if (rho_max > 0 && !e.empty_interval && sol.rho_lo > -rho_max + slack && sol.rho_hi < rho_max - slack) {
    e.drift_ppm = (sol.rho_lo + sol.rho_hi) / 2 / kNsPerPpm;
    e.drift_bound_ppm = (sol.rho_hi - sol.rho_lo) / 2 / kNsPerPpm;
  }

  // Minimum spans referred to now along a feasible slope (the middle of the feasible range, which
  // is feasible because the range is convex). With a constant offset the slope is ~0 and these
  // are the plain window minima; with drift, raw minima from different times would mix offsets.
  const double rho = (sol.rho_lo + sol.rho_hi) / 2;
  constexpr double inf = std::numeric_limits<double>::infinity();
  double fwd = inf, rev = inf;
  for (const Constraint& c : suffix(used)) {
    const double v = c.value_ns - rho * c.t_s;
    if (c.upper)
      fwd = std::min(fwd, v);
    else
      rev = std::min(rev, -v);
  }
  e.forward_margin_ns = fwd;
  e.reverse_margin_ns = rev;
  e.dt_min_ns = (fwd + rev) / 2;
  e.forward_onset_ns = *e.offset_ns - fwd;
  e.reverse_onset_ns = *e.offset_ns + rev;
  if (*e.dt_min_ns > 0) e.risk_ratio = std::fabs(*e.offset_ns) / *e.dt_min_ns;
  // During an empty episode the values are a hull over guessed break points: it holds θ, but its
  // midpoint is no measurement, however narrow. With the drift model, the data must also pin the
  // slope: a one-way hop's reverse side is its handshake, one instant that cannot pin it, and in
  // the lab its first-second interval (-53 µs ± 111 µs at offset 0, Δt_min 53 µs) passed the
  // width test alone and was flagged at_risk.
  const bool slope_pinned = rho_max == 0 || e.drift_ppm.has_value();
  e.settled = !e.empty_interval && slope_pinned &&
              (*e.dt_min_ns <= 0 || *e.bound_ns <= config_.at_risk_max_bound_ratio * *e.dt_min_ns);
  e.at_risk = e.settled && at_risk(*e.offset_ns, *e.bound_ns, *e.dt_min_ns, config_.at_risk_share);
  return e;
}

void Estimator::tick(std::int64_t now_ns) {
  for (auto it = pairs_.begin(); it != pairs_.end();) {
    PairState& st = it->second;
    const DomainId low = static_cast<DomainId>(it->first >> 16);
    const DomainId high = static_cast<DomainId>(it->first & 0xffff);
    bool new_break = false;
    PairEstimate e = evaluate_canonical(st, low, high, now_ns, &new_break);
    if (e.buckets_live == 0) {
      ++counters_.pairs_evicted;
      it = pairs_.erase(it);
      continue;
    }
    if (new_break)
      st.broken_through = floor_div(now_ns, config_.window_ns / static_cast<std::int64_t>(config_.buckets));
    if (e.empty_interval && !st.was_empty) {
      ++st.empty_episodes;
      ++counters_.empty_interval_episodes;
    }
    st.was_empty = e.empty_interval;
    if (!e.empty_interval && e.drift_ppm)
      st.settled_rho =
          std::pair{(*e.drift_ppm - *e.drift_bound_ppm) * kNsPerPpm, (*e.drift_ppm + *e.drift_bound_ppm) * kNsPerPpm};
    e.empty_interval_episodes = st.empty_episodes;
    st.canonical = e;
    st.has_snapshot = true;
    ++it;
  }
}

std::vector<PairEstimate> Estimator::estimates() const {
  std::vector<PairEstimate> out;
  for (const auto& [k, st] : pairs_) {
    if (!st.has_snapshot) continue;
    if (st.canonical.forward_spans) out.push_back(st.canonical);
    if (st.canonical.reverse_spans) out.push_back(reversed(st.canonical));
  }
  std::sort(out.begin(), out.end(), [](const PairEstimate& a, const PairEstimate& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return out;
}

std::optional<PairEstimate> Estimator::estimate(DomainId src, DomainId dst) const {
  if (src == dst) return std::nullopt;
  auto it = pairs_.find(key(src, dst));
  if (it == pairs_.end() || !it->second.has_snapshot) return std::nullopt;
  return src < dst ? it->second.canonical : reversed(it->second.canonical);
}

std::optional<PairEstimate> Estimator::evaluate(DomainId src, DomainId dst, std::int64_t now_ns) const {
  if (src == dst) return std::nullopt;
  auto it = pairs_.find(key(src, dst));
  if (it == pairs_.end()) return std::nullopt;
  PairEstimate e = evaluate_canonical(it->second, std::min(src, dst), std::max(src, dst), now_ns);
  return src < dst ? e : reversed(e);
}

std::vector<Estimator::WeightedSpan> Estimator::samples(DomainId src, DomainId dst, std::int64_t now_ns) const {
  std::vector<WeightedSpan> out;
  if (src == dst) return out;
  auto it = pairs_.find(key(src, dst));
  if (it == pairs_.end()) return out;
  const int d = src < dst ? 0 : 1;
  for (const Bucket* b : it->second.window.live(now_ns)) {
    const DirectionBucket& db = b->dir[d];
    if (db.sample.empty()) continue;
    const double w = static_cast<double>(db.count) / static_cast<double>(db.sample.size());
    for (std::int64_t s : db.sample) out.push_back({s, w});
  }
  return out;
}

std::vector<std::pair<DomainId, DomainId>> Estimator::directed_pairs(std::int64_t now_ns) const {
  std::vector<std::pair<DomainId, DomainId>> out;
  for (const auto& [k, st] : pairs_) {
    const DomainId low = static_cast<DomainId>(k >> 16), high = static_cast<DomainId>(k & 0xffff);
    bool fwd = false, rev = false;
    for (const Bucket* b : st.window.live(now_ns)) {
      fwd |= b->dir[0].count > 0;
      rev |= b->dir[1].count > 0;
    }
    if (fwd) out.emplace_back(low, high);
    if (rev) out.emplace_back(high, low);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ShownOffset shown_offset(const PairEstimate* e) {
  ShownOffset s;
  if (!e || (!e->lower_ns && !e->upper_ns)) {
    s.missing = e && e->empty_interval ? OffsetMissing::empty : OffsetMissing::no_estimate;
    return s;
  }
  if (!e->lower_ns || !e->upper_ns) {
    s.missing = OffsetMissing::one_sided;
    s.missing_bound = e->lower_ns ? MissingBound::upper : MissingBound::lower;
    return s;
  }
  if (e->empty_interval) {
    s.missing = OffsetMissing::empty;
    return s;
  }
  if (!e->settled || !e->offset_ns || !e->bound_ns) {
    s.missing = OffsetMissing::unsettled;
    return s;
  }
  s.missing = OffsetMissing::none;
  s.offset_ns = e->offset_ns;
  s.bound_ns = e->bound_ns;
  return s;
}

const char* offset_missing_name(OffsetMissing m) {
  switch (m) {
    case OffsetMissing::none: return nullptr;
    case OffsetMissing::no_estimate: return "no_estimate";
    case OffsetMissing::one_sided: return "one_sided";
    case OffsetMissing::unsettled: return "unsettled";
    case OffsetMissing::empty: return "empty";
  }
  return nullptr;
}

const char* missing_bound_name(MissingBound b) {
  switch (b) {
    case MissingBound::none: return nullptr;
    case MissingBound::lower: return "lower";
    case MissingBound::upper: return "upper";
  }
  return nullptr;
}

PairEstimate reversed(const PairEstimate& e) {
  auto neg = [](const std::optional<double>& v) { return v ? std::optional<double>(-*v) : std::nullopt; };
  PairEstimate r = e;
  r.src = e.dst;
  r.dst = e.src;
  r.forward_spans = e.reverse_spans;
  r.reverse_spans = e.forward_spans;
  r.forward_negative = e.reverse_negative;
  r.reverse_negative = e.forward_negative;
  r.forward_min_span_ns = e.reverse_min_span_ns;
  r.reverse_min_span_ns = e.forward_min_span_ns;
  r.lower_ns = neg(e.upper_ns);
  r.upper_ns = neg(e.lower_ns);
  r.offset_ns = neg(e.offset_ns);
  r.drift_ppm = neg(e.drift_ppm);
  r.forward_margin_ns = e.reverse_margin_ns;
  r.reverse_margin_ns = e.forward_margin_ns;
  r.forward_onset_ns = neg(e.reverse_onset_ns);
  r.reverse_onset_ns = neg(e.forward_onset_ns);
  return r;
}

}  // namespace skewscope::estimate
