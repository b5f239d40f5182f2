// A short, bounded history of each pair's offset estimates: what tells a step (a jump between two
// estimates that no plausible drift explains) from a drift (a steady move) after the estimator's
// own window has broken or forgotten the moment of the change.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "diagnose/diagnosis.hpp"

namespace skewscope::diagnose {

class PairHistory {
 public:
  explicit PairHistory(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  void add(const OffsetSample& s);
  const std::deque<OffsetSample>& samples() const { return samples_; }
  // What the history says of the pair (docs/diagnosis.md, "History"): its newest change (a step or
  // a drift), or without one its steady slope (kind none), or nothing.
  std::optional<Shift> shift(const Config& config) const;
  // The newest change alone (a step or a drift), if any.
  std::optional<Shift> change(const Config& config) const;
  // Without a change: the slopes of every line through the intervals (offset ± bound) of the newest
  // unbroken estimates, over the shortest stretch of at least min_drift_span_ns() whose half-width is at
  // most the drift threshold, else over the longest that one line admits (docs/diagnosis.md, step 6).
  std::optional<Shift> steady(const Config& config) const;
  // A settled estimate is in the history: "no shift" then means the pair was seen not to move.
  bool ever_settled() const;
  // The oldest settled estimate with an offset: what the pair looked like when first seen settled.
  std::optional<OffsetSample> first_settled() const;
  // The newest estimate's floor in either direction fell below an earlier one's (within
  // floor_reference_ns, from the first settled estimate on) by more than floor_margin_ns, twice the
  // floor's own wander (its largest rise above its lowest so far) and the drift threshold over the
  // gap: the offset moved faster than the threshold, unless the path itself got faster
  // (docs/diagnosis.md, "History", 7). The largest such fall beyond what is allowed.
  std::optional<FloorFall> floor_fall(const Config& config) const;
  // A floor that fell (above) and, over the newest stretch of at least floor_pace_ns, fell in three
  // ticks by at least the drift threshold over the gap, stood in at most one and rose in none: the
  // offset is moving (a step lowers a floor once, then it stands). The stretch's fall, the
  // threshold's over it, and its start.
  // `fell` is floor_fall's answer for the same history (computed once by the caller).
  std::optional<FloorFall> floor_falling(const FloorFall& fell, const Config& config) const;
  static constexpr std::size_t kSteadySamples = 60;

 private:
  // A step or a drift from the break at `brk` on (docs/diagnosis.md, steps 2-4).
  std::optional<Shift> shift_after_break(std::size_t brk, const Config& config) const;
  // A steady move of the settled offsets that no break announced (docs/diagnosis.md, step 5).
  std::optional<Shift> drift_without_break(const Config& config) const;
  std::size_t capacity_;
  std::deque<OffsetSample> samples_;
};

// Every pair's history, keyed by (src, dst) names in the orientation they were first seen.
class HistoryBook {
 public:
  explicit HistoryBook(Config config = {}) : config_(config) {}
  void add(const std::string& src, const std::string& dst, const OffsetSample& s);
  // Drops pairs whose newest sample is older than forget_after_ns.
  void forget_stale(std::int64_t now_ns);
  // The pair's history in the orientation asked for (src/dst swapped: offsets negated).
  std::optional<PairHistory> find(const std::string& src, const std::string& dst) const;
  std::size_t pairs() const { return pairs_.size(); }
  std::uint64_t pairs_not_remembered() const { return not_remembered_; }
  const Config& config() const { return config_; }

 private:
  Config config_;
  std::map<std::pair<std::string, std::string>, PairHistory> pairs_;
  std::uint64_t not_remembered_ = 0;  // samples of pairs beyond max_pairs
};

// The sample for the opposite orientation (θ changes sign).
OffsetSample reversed(const OffsetSample& s);

}  // namespace skewscope::diagnose
