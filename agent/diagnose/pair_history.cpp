#include "diagnose/pair_history.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace skewscope::diagnose {

void PairHistory::add(const OffsetSample& s) {
  if (!samples_.empty() && s.t_ns <= samples_.back().t_ns) return;  // one sample per tick, in order
  samples_.push_back(s);
  while (samples_.size() > capacity_) samples_.pop_front();
}

namespace {
bool has_offset(const OffsetSample& s) { return s.offset_ns && s.bound_ns; }
double ns_per_ppm_over(std::int64_t gap_ns) { return static_cast<double>(gap_ns) * 1e-6; }

// The slopes (ns/s) of the lines through every interval offered to narrow(): the pairs decide, for
// a line has two parameters.
struct SlopeRange {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  // Keeps the slopes that estimate `a`, earlier than `b`, leaves to a line through both intervals.
  void narrow(const OffsetSample& a, const OffsetSample& b) {
    const double gap_s = static_cast<double>(b.t_ns - a.t_ns) * 1e-9;
    lo = std::max(lo, (*b.offset_ns - *b.bound_ns - (*a.offset_ns + *a.bound_ns)) / gap_s);
    hi = std::min(hi, (*b.offset_ns + *b.bound_ns - (*a.offset_ns - *a.bound_ns)) / gap_s);
  }
  bool empty() const { return lo > hi; }
  double middle_ppm() const { return (lo + hi) / 2 * 1e-3; }  // ns/s → ppm
  double half_width_ppm() const { return (hi - lo) / 2 * 1e-3; }
};

// Keeps at most `most` of the indices, the first and the last among them, evenly spread.
void thin_evenly(std::vector<std::size_t>& indices, std::size_t most) {
  if (indices.size() <= most || most < 2) return;
  std::vector<std::size_t> kept;
  const double step = static_cast<double>(indices.size() - 1) / static_cast<double>(most - 1);
  for (std::size_t i = 0; i < most; ++i)
    kept.push_back(indices[static_cast<std::size_t>(std::lround(step * static_cast<double>(i)))]);
  indices = std::move(kept);
}
}  // namespace

bool PairHistory::ever_settled() const {
  for (const auto& s : samples_)
    if (s.settled && has_offset(s)) return true;
  return false;
}

std::optional<OffsetSample> PairHistory::first_settled() const {
  for (const auto& s : samples_)
    if (s.settled && has_offset(s)) return s;
  return std::nullopt;
}

std::optional<Shift> PairHistory::shift(const Config& config) const {
  if (auto c = change(config)) return c;
  return steady(config);
}

std::optional<Shift> PairHistory::steady(const Config& config) const {
  // From the newest estimate back, while unbroken with an offset: a line with slope s (ns/s) passes
  // through every interval [lo, hi] of the stretch iff, for each earlier a and later b,
  // (lo_b − hi_a) / (t_b − t_a) ≤ s ≤ (hi_b − lo_a) / (t_b − t_a) (two parameters: the pairs decide).
  // Every estimate narrows the range or leaves it; one that no line admits with the newer ones ends
  // the stretch (the pair bent there). The shortest stretch that is tight enough is the least
  // diluted by the time before a change the stretch may still hold. One sample per
  // steady_stride() is taken (a second's worth), at most kSteadySamples: the cost is quadratic.
  const std::size_t n = samples_.size();
  if (n < 2) return std::nullopt;
  const OffsetSample& newest = samples_.back();
  const std::size_t stride = config.steady_stride();
  SlopeRange range;
  std::vector<std::size_t> later;  // the samples taken so far, newest first
  std::optional<Shift> best;
  for (std::size_t k = n; k-- > 0 && later.size() < kSteadySamples;) {
    const OffsetSample& a = samples_[k];
    if (a.broken || !has_offset(a)) break;
    if ((n - 1 - k) % stride != 0) continue;
    SlopeRange next = range;
    for (std::size_t j : later) next.narrow(a, samples_[j]);
    if (next.empty()) break;
    range = next;
    later.push_back(k);
    if (newest.t_ns - a.t_ns < config.min_drift_span_ns()) continue;
    best = Shift{Cause::none, range.middle_ppm(), range.half_width_ppm(), a.t_ns, *a.offset_ns, *newest.offset_ns};
    if (best->tolerance <= config.drift_threshold_ppm) break;
  }
  return best;
}

std::optional<Shift> PairHistory::change(const Config& config) const {
  // The newest break: the estimator's window turned empty, or two consecutive settled estimates
  // differ by more than their bounds and the largest drift allow.
  const std::size_t n = samples_.size();
  std::optional<std::size_t> brk;
  for (std::size_t k = n; k-- > 1;) {
    const OffsetSample &a = samples_[k - 1], &b = samples_[k];
    const bool entered_empty = b.broken && !a.broken;
    const bool jumped = a.settled && b.settled && has_offset(a) && has_offset(b) &&
                        std::abs(*b.offset_ns - *a.offset_ns) >
                            *a.bound_ns + *b.bound_ns + config.max_drift_ppm * ns_per_ppm_over(b.t_ns - a.t_ns);
    if (entered_empty || jumped) {
      brk = k;
      break;
    }
  }
  if (brk)
    if (auto s = shift_after_break(*brk, config)) return s;
  // No break, or one the history cannot judge (a warm-up break before any settled estimate).
  return drift_without_break(config);
}

std::optional<Shift> PairHistory::shift_after_break(std::size_t brk_index, const Config& config) const {
  const std::size_t n = samples_.size();
  const std::optional<std::size_t> brk = brk_index;
  // The anchor: the newest settled estimate before the break.
  std::optional<std::size_t> anchor;
  for (std::size_t j = *brk; j-- > 0;)
    if (samples_[j].settled && has_offset(samples_[j])) {
      anchor = j;
      break;
    }
  if (!anchor) return std::nullopt;
  const OffsetSample& a = samples_[*anchor];
  // A step: the first estimate after the break that differs from the anchor by more than both
  // bounds plus the largest drift over the gap.
  const OffsetSample* newest = nullptr;
  for (std::size_t k = *brk; k < n; ++k) {
    const OffsetSample& b = samples_[k];
    if (!has_offset(b)) continue;
    newest = &b;
    const double change = *b.offset_ns - *a.offset_ns;
    const double tolerance = *a.bound_ns + *b.bound_ns;
    if (std::abs(change) > tolerance + config.max_drift_ppm * ns_per_ppm_over(b.t_ns - a.t_ns))
      return Shift{Cause::clock_step, change, tolerance, samples_[*brk].t_ns, *a.offset_ns, *b.offset_ns};
  }
  // Else a drift: the slope from the first estimate after the break to the newest (the anchor
  // may predate the change by seconds, which would dilute the slope), over at least
  // min_drift_span_ns(), if it clears what their bounds explain over that time and the threshold.
  const OffsetSample* first = nullptr;
  for (std::size_t k = *brk; k < n && !first; ++k)
    if (has_offset(samples_[k])) first = &samples_[k];
  if (!first || !newest || newest->t_ns - first->t_ns < config.min_drift_span_ns()) return std::nullopt;
  const double gap_s = static_cast<double>(newest->t_ns - first->t_ns) * 1e-9;
  double slope_ppm = (*newest->offset_ns - *first->offset_ns) / gap_s * 1e-3;  // ns/s → ppm
  double tolerance_ppm = (*first->bound_ns + *newest->bound_ns) / gap_s * 1e-3;
  // Every estimate since the break holds θ within its interval, and a drift is one line: the
  // slopes of the lines through all of them, when narrower (an estimate in between with a tighter
  // interval than the first, the hull of the break's first ticks being the widest).
  // At most kSteadySamples of them, spread evenly from the first to the newest: the cost is quadratic.
  std::vector<std::size_t> picked;
  for (std::size_t k = *brk; k < n; ++k)
    if (has_offset(samples_[k])) picked.push_back(k);
  thin_evenly(picked, kSteadySamples);
  SlopeRange range;
  for (std::size_t i = 0; i < picked.size(); ++i)
    for (std::size_t j = i + 1; j < picked.size(); ++j) range.narrow(samples_[picked[i]], samples_[picked[j]]);
  if (!range.empty() && range.half_width_ppm() < tolerance_ppm) {
    slope_ppm = range.middle_ppm();
    tolerance_ppm = range.half_width_ppm();
  }
  if (std::abs(slope_ppm) > tolerance_ppm + config.drift_threshold_ppm)
    return Shift{Cause::clock_drift, slope_ppm, tolerance_ppm, samples_[*brk].t_ns, *a.offset_ns, *newest->offset_ns};
  return std::nullopt;
}

std::optional<Shift> PairHistory::drift_without_break(const Config& config) const {
  // The estimator may follow a drift with its own slope, its window never empty: the settled
  // offsets then move steadily while no two consecutive ones jump. From the newest settled
  // estimate back, the first earlier settled one (at least min_drift_span_ns() before) that differs
  // by more than both bounds and the threshold's drift over the gap: the least diluted slope.
  if (samples_.empty()) return std::nullopt;
  const OffsetSample& n = samples_.back();
  if (!n.settled || !has_offset(n)) return std::nullopt;
  for (std::size_t k = samples_.size() - 1; k-- > 0;) {
    const OffsetSample& e = samples_[k];
    if (!e.settled || !has_offset(e) || n.t_ns - e.t_ns < config.min_drift_span_ns()) continue;
    const double change = *n.offset_ns - *e.offset_ns;
    const double tolerance = *n.bound_ns + *e.bound_ns;
    if (std::abs(change) <= tolerance + config.drift_threshold_ppm * ns_per_ppm_over(n.t_ns - e.t_ns)) continue;
    const double gap_s = static_cast<double>(n.t_ns - e.t_ns) * 1e-9;
    return Shift{Cause::clock_drift, change / gap_s * 1e-3, tolerance / gap_s * 1e-3, e.t_ns,
                 *e.offset_ns,       *n.offset_ns};
  }
  return std::nullopt;
}

std::optional<FloorFall> PairHistory::floor_fall(const Config& config) const {
  // θ lower by δ lowers every src → dst span by δ at once, so that direction's floor falls as the
  // offset moves, while the offset's own interval (as wide as the delays) hides the move for
  // seconds. A floor wanders as its least spans enter and leave the window; a fall beyond that
  // wander and beyond what a drift under the threshold explains over the gap is a move.
  // A window still filling is a running least over ever more spans: it falls with no clock moving.
  if (samples_.size() < 2 || samples_.back().window_filling) return std::nullopt;
  const OffsetSample& now = samples_.back();
  std::optional<FloorFall> best;
  for (const bool forward : {true, false}) {
    const auto floor_of = [forward](const OffsetSample& s) {
      return forward ? s.forward_min_span_ns : s.reverse_min_span_ns;
    };
    if (!floor_of(now)) continue;
    std::vector<const OffsetSample*> reference;
    double lowest = std::numeric_limits<double>::infinity(), wander = 0;
    bool settled_seen = false;  // before the pair first settled its window was still filling
    for (std::size_t k = 0; k + 1 < samples_.size(); ++k) {
      const OffsetSample& s = samples_[k];
      settled_seen = settled_seen || s.settled;  // once, ever: a lopsided path stays unsettled after
      if (now.t_ns - s.t_ns > config.floor_reference_ns) continue;
      const auto f = floor_of(s);
      if (!settled_seen || s.window_filling || !f) continue;
      if (std::isfinite(lowest)) wander = std::max(wander, *f - lowest);
      lowest = std::min(lowest, *f);
      reference.push_back(&s);
    }
    for (const OffsetSample* s : reference) {
      const double fall = *floor_of(*s) - *floor_of(now);
      const double allowed =
          config.floor_margin_ns + 2 * wander + config.drift_threshold_ppm * ns_per_ppm_over(now.t_ns - s->t_ns);
      if (fall > allowed && (!best || fall - allowed > best->fall_ns - best->allowed_ns))
        best = FloorFall{forward, fall, allowed, s->t_ns};
    }
  }
  return best;
}

std::optional<FloorFall> PairHistory::floor_falling(const FloorFall& fell, const Config& config) const {
  const auto floor_of = [&](const OffsetSample& s) {
    return fell.forward ? s.forward_min_span_ns : s.reverse_min_span_ns;
  };
  // A falling direction's floor is its newest spans' least, so it may stand for a tick when they
  // were all a little slow: one such tick is allowed, a rise is not.
  constexpr std::size_t kFalls = 3, kStallsAllowed = 1;
  const OffsetSample& now = samples_.back();
  std::size_t falls = 0, stalls = 0;
  for (std::size_t k = samples_.size() - 1; k-- > 0;) {
    const OffsetSample &a = samples_[k], &b = samples_[k + 1];
    if (!floor_of(a) || !floor_of(b) || *floor_of(b) > *floor_of(a) || a.window_filling) return std::nullopt;
    if (*floor_of(a) - *floor_of(b) >= config.drift_threshold_ppm * ns_per_ppm_over(b.t_ns - a.t_ns))
      ++falls;
    else if (++stalls > kStallsAllowed)
      return std::nullopt;  // it stood: a jump that is over, or no move
    if (falls >= kFalls && now.t_ns - a.t_ns >= config.floor_pace_ns)
      return FloorFall{fell.forward, *floor_of(a) - *floor_of(now),
                       config.drift_threshold_ppm * ns_per_ppm_over(now.t_ns - a.t_ns), a.t_ns};
  }
  return std::nullopt;
}

OffsetSample reversed(const OffsetSample& s) {
  OffsetSample r = s;
  if (r.offset_ns) r.offset_ns = -*r.offset_ns;
  if (r.drift_ppm) r.drift_ppm = -*r.drift_ppm;
  std::swap(r.forward_min_span_ns, r.reverse_min_span_ns);
  return r;
}

void HistoryBook::add(const std::string& src, const std::string& dst, const OffsetSample& s) {
  if (auto it = pairs_.find({dst, src}); it != pairs_.end()) {
    it->second.add(reversed(s));
    return;
  }
  auto it = pairs_.find({src, dst});
  if (it == pairs_.end()) {
    if (pairs_.size() >= config_.max_pairs) {
      ++not_remembered_;
      return;
    }
    it = pairs_.emplace(std::make_pair(src, dst), PairHistory(config_.history_samples())).first;
  }
  it->second.add(s);
}

void HistoryBook::forget_stale(std::int64_t now_ns) {
  std::erase_if(pairs_, [&](const auto& entry) {
    const auto& samples = entry.second.samples();
    return samples.empty() || now_ns - samples.back().t_ns > config_.forget_after_ns;
  });
}

std::optional<PairHistory> HistoryBook::find(const std::string& src, const std::string& dst) const {
  if (auto it = pairs_.find({src, dst}); it != pairs_.end()) return it->second;
  auto it = pairs_.find({dst, src});
  if (it == pairs_.end()) return std::nullopt;
  PairHistory flipped(config_.history_samples());
  for (const auto& s : it->second.samples()) flipped.add(reversed(s));
  return flipped;
}

}  // namespace skewscope::diagnose
