// The diagnose stage's vocabulary: what the engine is given (per pair of hosts and per host) and
// what it answers (per pair and per host: cause, culprit, evidence, confidence).
//
// Plain values with host names rather than the agent's domain ids, so that the same engine runs
// over one agent's report and over the merged view of several agents (`skewscope explain` with
// more than one --agent). Every rule is written down in docs/diagnosis.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace skewscope::diagnose {

// The label values of skewscope_diagnosis and skewscope_host_suspect: a fixed set.
enum class Cause : std::uint8_t {
  none,                    // the evidence is complete and shows no fault
  clock_step,              // the offset jumped between two estimates
  clock_drift,             // the offset moves steadily (slope in ppm)
  ptp_lost,                // a host's PTP client left SLAVE, lost its grandmaster, or is in holdover
  clock_source_disagrees,  // inversions deeper than the hosts' claimed error bounds
  path_asymmetry,          // lopsided interval while the clocks' own sources agree
  capture_incomplete,      // halves lost in the window: nothing can be concluded
  undetermined,            // something is wrong or unknown, and the evidence cannot say what
};
inline constexpr std::size_t kCauseCount = 8;
const char* cause_name(Cause c);
std::optional<Cause> cause_from_name(const std::string& name);

struct Config {
  double drift_threshold_ppm = 5;  // a slope below this is no fault (disciplined clocks stay well inside it)
  double max_drift_ppm = 200;      // a change faster than this over the gap between two estimates is a step
  // The estimator's evaluation interval (one history sample per pair each): a slope is measured
  // over at least two of them, and the steady slope looks at most one sample a second.
  std::int64_t estimate_interval_ns = 1'000'000'000;
  std::int64_t history_ns = 120'000'000'000;       // per pair: two minutes of samples
  std::size_t max_pairs = 1024;                    // pairs with a history; further pairs are counted, not remembered
  std::int64_t forget_after_ns = 120'000'000'000;  // a pair without an estimate that long loses its history
  double asymmetry_ratio = 4;  // lopsided: one direction's minimum span at least this many times the other's
  // A floor (the window's least span one way) is compared with those of the windows this far back.
  std::int64_t floor_reference_ns = 30'000'000'000;
  // A fall within this (plus the floor's own wander) is no fall: a still pair's floor can drop by
  // 8 µs at once in the lab (a rare low span), though it usually wanders by less than one.
  double floor_margin_ns = 8'000;
  // A floor that fell at the threshold's pace or faster in three ticks of at least this long a
  // stretch (standing in at most one, rising in none) is an offset on the move, not one that jumped.
  std::int64_t floor_pace_ns = 750'000'000;

  std::size_t history_samples() const {
    return static_cast<std::size_t>(history_ns / std::max<std::int64_t>(estimate_interval_ns, 1)) + 1;
  }
  // A slope is measured over at least two estimator ticks (one interval): a fast drift is named
  // one tick after its break, a slow one when its slope over a longer time clears its tolerance.
  std::int64_t min_drift_span_ns() const { return estimate_interval_ns; }
  // The steady slope takes one sample in this many, so that its 60 samples span a minute.
  std::size_t steady_stride() const {
    return static_cast<std::size_t>(
        std::max<std::int64_t>(1, 1'000'000'000 / std::max<std::int64_t>(estimate_interval_ns, 1)));
  }
};

// One estimator tick of one pair, θ = clock(dst) − clock(src).
struct OffsetSample {
  std::int64_t t_ns = 0;                      // CLOCK_MONOTONIC of the evaluation
  std::optional<double> offset_ns, bound_ns;  // two-sided only: midpoint and half-width (the hull while broken)
  bool settled = false;                       // the estimator's own test (docs/contract.md)
  bool broken = false;                        // the window admits no offset line (empty_interval)
  std::optional<double> drift_ppm, drift_bound_ppm;
  // The window's least span each way (src → dst, dst → src): its floors. θ moving by δ moves one
  // floor down by δ at once (the other rises only once the older spans leave the window).
  std::optional<double> forward_min_span_ns, reverse_min_span_ns;
  // The window is younger than its length (PairEstimate::window_filling): its floors only fall as
  // spans come, so they are not compared.
  bool window_filling = false;
};

// A floor of the pair that fell below an earlier window's by more than the floor's own wander and
// the drift threshold explain (pair_history.hpp, docs/diagnosis.md "History", 7).
struct FloorFall {
  bool forward = true;        // src → dst fell (θ fell), else dst → src (θ rose)
  double fall_ns = 0;         // below the earlier window's floor
  double allowed_ns = 0;      // what the margin, the wander and the threshold over the gap explain
  std::int64_t since_ns = 0;  // that earlier estimate's time
};

// A change of a pair's offset its history shows, or without one its steady slope (pair_history.hpp).
struct Shift {
  Cause kind = Cause::none;            // clock_step or clock_drift; none: no change, the steady slope
  double value = 0;                    // step in ns, or slope in ppm (of θ)
  double tolerance = 0;                // same unit: what the bounds alone could explain
  std::int64_t at_ns = 0;              // the first estimate after the anchor that showed it (none: the stretch's first)
  double before_ns = 0, after_ns = 0;  // the offsets compared
};

// What the engine knows about one pair of hosts at the evaluation.
struct PairObservation {
  std::string src, dst;
  OffsetSample now;  // the current estimate; offset/bound absent when one-sided or no estimate
  bool has_estimate = false;
  bool two_sided = false;
  std::uint64_t spans = 0, negative_spans = 0, unexplained_negative_spans = 0;
  bool capture_complete = true;               // capture up and no half lost in the window
  std::optional<Shift> shift;                 // from the pair's history: a change, or its steady slope
  bool history_settled = false;               // the history holds a settled estimate (PairHistory::ever_settled)
  std::optional<OffsetSample> first_settled;  // the oldest settled estimate the history holds
  std::optional<FloorFall> floor_fall;        // a floor fell: the offset moved (PairHistory::floor_fall)
  std::optional<FloorFall> floor_falling;     // and keeps falling: the offset moves (PairHistory::floor_falling)
};

// What one host's clock sources say (the clocks stage; only the error bound for a remote host).
struct HostClock {
  std::string host;
  bool readings = false;                  // the clocks stage polled and something answered
  std::optional<double> error_bound_ns;   // sane (clocks stage) or absent
  std::string status;                     // "synchronized", "free_running", "disrupted", "unknown"
  bool ptp = false;                       // a ptp4l instance speaks (or spoke) for this clock
  std::optional<std::string> port_state;  // of that instance's primary port
  std::optional<bool> gm_present;
  std::optional<std::string> gm_identity;
  std::optional<double> ptp_offset_ns;  // master offset at the last sync
};

// A value the triangulation compares across pairs, θ = clock(dst) − clock(src).
struct Measure {
  double value = 0;
  double tolerance = 0;  // |value| ≤ tolerance: no shift
};

struct PairDiagnosis {
  std::string src, dst;
  Cause cause = Cause::none;
  std::optional<std::string> culprit;  // a host name; absent: undetermined (or no clock at fault)
  std::string culprit_note;            // why it is named, or why it cannot be
  // No culprit yet, but it is one of these hosts (more than one fits the pairs so far).
  std::vector<std::string> culprit_candidates;
  std::optional<double> amount;          // step (ns), slope (ppm), offset or asymmetry (ns), per cause
  std::optional<double> tolerance;       // the same unit: what the bounds alone explain
  std::optional<std::int64_t> since_ns;  // CLOCK_MONOTONIC when the change was first seen
  std::optional<double> age_seconds;     // how long ago that was, at the report
  double confidence = 0;                 // 0..1, docs/diagnosis.md
  std::string evidence;                  // one line: the values the rule used
  // What this pair contributes to triangulation (also when its cause is none): its step (ns) or
  // "no step" (0 ± bounds), its slope (ppm) and its current offset (ns).
  std::optional<Measure> step, drift, offset;
  // Its spans invert, its estimator's window broke or a floor fell, while its history shows no
  // change (yet): its offset reached the delay or moved, so it may be moving however still its
  // slope looks, and it cannot vouch for the others' stillness (drift triangulation, rule 1). Not
  // in the JSON: a merged view takes every pair as able to.
  bool moved_unmeasured = false;
  // Of those, its window broke or a floor fell: its offset certainly moved (left its line, or passed
  // a floor by more than a drift under the threshold would), so no host outside it fits a drift
  // (rule 1), though its slope is not measured yet. Not in the JSON.
  bool moved_certainly = false;
  // Rule 4 named the drift by a falling floor: the evidence already says which floor fell. Not in
  // the JSON.
  bool evidence_names_floor = false;
  bool incident() const { return cause != Cause::none && cause != Cause::undetermined; }
};

struct HostDiagnosis {
  std::string host;
  Cause cause = Cause::none;  // what this host is blamed for (none: nothing)
  bool culprit = false;       // named by triangulation or by its own clock source
  std::optional<double> amount;
  std::vector<std::string> pairs;  // the pairs ("src→dst") whose evidence names it
  std::string clock;               // what its clock source says, one line
  double confidence = 0;
};

struct DiagnosisReport {
  std::vector<PairDiagnosis> pairs;  // ordered by (src, dst)
  std::vector<HostDiagnosis> hosts;  // ordered by name
  std::size_t incidents = 0;         // pairs with incident()
};

}  // namespace skewscope::diagnose
