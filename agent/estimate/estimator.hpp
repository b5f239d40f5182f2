// Offset interval, drift, Δt_min and the at-risk test for every pair of domains, from spans only.
//
// Call observe() per span, tick(now) a few times a second (the agent: --estimate-interval), and read estimates() /
// estimate() on a status request. Time is always passed in (CLOCK_MONOTONIC ns, the same clock as Span::capture_ns),
// never read here. Not thread-safe: the agent calls it from the thread that owns the pipeline.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "estimate/window.hpp"
#include "skewscope/span.hpp"

namespace skewscope::estimate {

struct Config {
  std::int64_t window_ns = 30'000'000'000;  // DESIGN.md's health window
  std::size_t buckets = 30;                 // window granularity; clamped to [1, 64] (solver is O(n³))
  // Largest |dθ/dt| assumed within a window. Crystal oscillators stay within ±100 ppm. A clock
  // drifting faster is outside the model: over a few buckets it shows up as an empty interval,
  // but an extrapolation to now can miss it first. 0 turns the model into the plain intersection
  // [max lower, min upper] (and disables drift estimates).
  double max_drift_ppm = 200;
  double at_risk_share = 0.5;  // at_risk when |offset| ≥ share × Δt_min and |offset| > bound ...
  // ... and the interval is settled: a half-width above this many Δt_min (warm-up while the drift
  // slope is not pinned, or the hull after a break) leaves the midpoint too loose for a verdict.
  // Seen in the lab: at offset 0 the first 1–2 s gave midpoints a whole Δt_min off.
  double at_risk_max_bound_ratio = 3.0;
  std::size_t samples_per_bucket = 32;  // what-if reservoir, per bucket and direction
  std::size_t max_pairs = 1024;         // unordered pairs tracked; spans of further pairs are counted and dropped
};

// Estimate for the directed pair src → dst. θ = clock_dst − clock_src ("dst-minus-src", the
// contract's offset_seconds). "forward" is traffic src → dst, "reverse" is dst → src.
// All values in nanoseconds; nullopt means not known from the window — never a guess.
struct PairEstimate {
  DomainId src = 0, dst = 0;
  std::int64_t evaluated_at_ns = 0;

  std::uint64_t forward_spans = 0, reverse_spans = 0;        // in the window
  std::uint64_t forward_negative = 0, reverse_negative = 0;  // in the window
  std::optional<std::int64_t> forward_min_span_ns, reverse_min_span_ns;

  std::optional<double> lower_ns, upper_ns;          // θ ≥ lower (needs reverse traffic), θ ≤ upper (forward)
  std::optional<double> offset_ns;                   // midpoint: both directions only
  std::optional<double> bound_ns;                    // half-width: both directions only
  std::optional<double> drift_ppm, drift_bound_ppm;  // dθ/dt, when the window pins it

  // Half the minimum round trip, drift-compensated; does not depend on θ.
  std::optional<double> dt_min_ns;
  // How far θ can still move before inversions start: down by forward_margin (src → dst spans go
  // negative) or up by reverse_margin. Observable without knowing θ: they are the minimum spans
  // referred to the evaluation time.
  std::optional<double> forward_margin_ns, reverse_margin_ns;
  // The same as offsets: inversions src → dst start when θ < forward_onset, dst → src when θ >
  // reverse_onset. They carry the midpoint's asymmetry bias (see README); the margins do not.
  std::optional<double> forward_onset_ns, reverse_onset_ns;
  std::optional<double> risk_ratio;  // |offset| / Δt_min: 0 centred, 1 at the first inversion
  // Two-sided, consistent (not empty_interval), the drift slope pinned by the data (unless
  // max_drift_ppm is 0) and narrow: half-width ≤ at_risk_max_bound_ratio × Δt_min. Only then does
  // the midpoint mean anything: an offset is shown and at_risk judged.
  // One-way traffic with a stale reverse sample (the handshake of a PUSH/PULL hop) is two-sided
  // but widens by max_drift × its age, and its midpoint walks away from the truth.
  bool settled = false;
  bool at_risk = false;  // judged only when settled

  // The window admits no offset line, or did since its oldest bucket: the offset jumped or changed
  // pace (a step, a clock fix, a new frequency) or spans were mispaired. The values above are then
  // the hull over every possible break point of the fits after it (wider, but they hold θ), built
  // from at most the newest buckets_used of buckets_live; absent if even the newest contradicts
  // itself. The state lasts until the buckets from before the break have left the window.
  bool empty_interval = false;
  std::uint64_t empty_interval_episodes = 0;  // times this pair entered the empty state (at tick)
  std::size_t buckets_used = 0, buckets_live = 0;
  // The window's oldest bucket holds no spans: the pair's traffic (or its return after a pause)
  // is younger than the window, which is still filling. Its floors are then a running least over
  // ever more spans and fall with no clock moving (docs/diagnosis.md "History", 7).
  bool window_filling = false;
};

struct Counters {
  std::uint64_t spans = 0;              // accepted
  std::uint64_t late_spans = 0;         // older than their pair's window: dropped
  std::uint64_t same_domain_spans = 0;  // src == dst: no clock information, ignored
  std::uint64_t pair_table_full = 0;    // spans dropped because max_pairs was reached
  std::uint64_t empty_interval_episodes = 0;
  std::uint64_t pairs_evicted = 0;  // pairs whose window emptied (memory returned)
};

class Estimator {
 public:
  explicit Estimator(Config config = {});

  void observe(const Span& span);

  // Re-evaluates every pair at now_ns, updates the empty-interval episode counters and drops pairs
  // with nothing left in their window. Estimates read afterwards are this snapshot.
  void tick(std::int64_t now_ns);

  // Snapshot from the last tick: one entry per direction that had traffic in the window.
  std::vector<PairEstimate> estimates() const;
  // Snapshot for one directed pair, available in both orientations once either has traffic.
  std::optional<PairEstimate> estimate(DomainId src, DomainId dst) const;
  // Fresh evaluation at now_ns without touching counters or the snapshot.
  std::optional<PairEstimate> evaluate(DomainId src, DomainId dst, std::int64_t now_ns) const;

  // Span samples of src → dst in the window ending at now_ns, each with the number of spans it
  // stands for (bucket count / bucket sample size), for the what-if analysis.
  struct WeightedSpan {
    std::int64_t span_ns;
    double weight;
  };
  std::vector<WeightedSpan> samples(DomainId src, DomainId dst, std::int64_t now_ns) const;
  std::vector<std::pair<DomainId, DomainId>> directed_pairs(std::int64_t now_ns) const;

  const Counters& counters() const { return counters_; }
  const Config& config() const { return config_; }

 private:
  struct PairState {
    explicit PairState(PairWindow w) : window(std::move(w)) {}
    PairWindow window;
    PairEstimate canonical;  // low id → high id, from the last tick
    bool has_snapshot = false;
    bool was_empty = false;
    std::uint64_t empty_episodes = 0;
    // Slope range (ns/s) of the last consistent tick that pinned the drift: see evaluate_canonical.
    std::optional<std::pair<double, double>> settled_rho;
    // Buckets up to this index may hold data from before a detected break (kNoBucket: none).
    std::int64_t broken_through = kNoBucket;
  };
  static std::uint32_t key(DomainId a, DomainId b) {
    return (static_cast<std::uint32_t>(std::min(a, b)) << 16) | std::max(a, b);
  }
  // new_break: the window admits no offset line and no earlier break explains it.
  PairEstimate evaluate_canonical(const PairState& state, DomainId low, DomainId high, std::int64_t now_ns,
                                  bool* new_break = nullptr) const;

  Config config_;
  std::unordered_map<std::uint32_t, PairState> pairs_;
  Counters counters_;
};

// Why an estimate shows no offset. The names are the status JSON's offset_missing values.
enum class OffsetMissing {
  none,         // shown: offset_ns ± bound_ns
  no_estimate,  // nothing in the estimator's window for this pair (yet)
  one_sided,    // traffic bounds θ from one side only (see MissingBound)
  unsettled,    // two-sided, but wider than at_risk_max_bound_ratio × Δt_min
  empty,        // the window admits no offset line (a step, a new frequency, mispaired spans)
};
enum class MissingBound { none, lower, upper };  // lower: no dst → src traffic; upper: no src → dst

struct ShownOffset {
  std::optional<double> offset_ns, bound_ns;  // both or neither
  OffsetMissing missing = OffsetMissing::no_estimate;
  MissingBound missing_bound = MissingBound::none;
};

// The one rule for every output (status JSON, top, metrics, what-if): an offset only with its
// bound, and only from a settled interval. e == nullptr: no estimate at all.
ShownOffset shown_offset(const PairEstimate* e);
const char* offset_missing_name(OffsetMissing m);  // nullptr for none
const char* missing_bound_name(MissingBound b);    // nullptr for none

// Re-expresses an estimate for the opposite direction (θ changes sign, forward ↔ reverse).
PairEstimate reversed(const PairEstimate& e);

// The at-risk test, kept separate so health can apply it to any offset/Δt_min it trusts: the
// offset exceeds its own uncertainty (|offset| > bound: the interval [offset ± bound] excludes
// zero) and reaches share × Δt_min; or Δt_min ≤ 0. Why not |offset| + bound: with traffic-only
// bounds the half-width equals Δt_min (both are half the minimum round trip), so |offset| + bound
// ≥ share × Δt_min would hold for every pair. With such bounds the interval excludes zero only
// once one direction's minimum span is negative: from the traffic alone, at_risk comes with the
// first inversions; before them only the clocks' error bounds can say a pair is at risk.
bool at_risk(double offset_ns, double bound_ns, double dt_min_ns, double share);

}  // namespace skewscope::estimate
