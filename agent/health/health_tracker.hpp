// causality_health per (src, dst, transport) and overall, over a sliding window
// (default 30 s, the published definition: 1 when no negative span was seen in the window).
//
// Health 1 is a claim of certainty, so it is only made when the capture saw everything:
//  - capture down (the event source failed): every pair and the overall health are unknown
//    (health null, state unknown), whatever the window held;
//  - halves lost in the window (ring buffer full, in-flight table full, pending table full,
//    malformed records): a lost half may have been the other end of a negative span. Losses
//    cannot be tied to a pair (a record the ring buffer refused was never read), so they mark the
//    window of every pair: a pair with a negative span in the window is still violated (seen is
//    certain), any other pair is unknown with health null until the losses leave the window.
//
// And health 1 is a claim about evidence, so it is never made without any:
//  - a pair whose window holds no span (its traffic stopped) is unknown with health null; the
//    age of its last span is still reported, since staleness is what matters then;
//  - a local domain whose halves mostly failed to pair in the window (below the pairing floor,
//    pairing_window.hpp) may be hiding its inversions (address translation, a capture that sees
//    one end only): its pairs and the overall health are unknown, unless a violation was seen;
//  - the overall health is 1 only when no pair is violated, nothing above makes it unknown, and
//    at least one pair has health 1 (an agent with no pair, or only unknown pairs, knows nothing).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "health/loss_window.hpp"
#include "health/pair_window.hpp"
#include "health/pairing_window.hpp"
#include "health/span_histogram.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

enum class PairState { ok, at_risk, violated, unknown };
const char* pair_state_name(PairState s);

// Why a health is null (none: it is known). For a pair and for the agent as a whole.
enum class UnknownReason : std::uint8_t {
  none,
  capture_down,     // the event source failed
  halves_lost,      // halves lost in the window, no negative span seen
  no_spans,         // the pair's window holds no span
  halves_unpaired,  // a local domain is below the pairing floor
  window_filling,   // the pair has just moved to this agent (exchange hand-over)
  no_pairs,         // overall only: no pair has a known health
};
const char* unknown_reason_name(UnknownReason r);

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
  std::optional<int> health;       // null: cannot know (see the rules above)
  PairState state = PairState::unknown;
  UnknownReason unknown_reason = UnknownReason::no_spans;  // none exactly when health is known
  std::uint64_t window_lost_halves = 0;                    // halves lost in the window (by any counted reason)
  bool capture_complete = true;                            // capture up and nothing lost in the window
  std::optional<std::int64_t> last_span_age_ns;  // since the pair's newest span, in the window or not; null: none ever
};

struct HealthReport {
  std::optional<int> health;  // 0 when any pair is violated; null when the agent cannot know
  UnknownReason unknown_reason = UnknownReason::no_pairs;
  std::int64_t window_ns = 0;
  bool capture_up = true;
  std::uint64_t window_lost_halves = 0;
  std::vector<PairReport> pairs;       // ordered by (src, dst, transport)
  std::vector<DomainPairing> pairing;  // per local domain with counted halves in the window
};

// What the capture could see over a window.
struct CaptureCoverage {
  bool up = true;        // the event source is alive
  bool complete = true;  // no half was lost in the window
};

// The state and health rules in one place. `at_risk` comes from the estimate and clock stages;
// `unpaired`: the pair's src or dst domain is below the pairing floor.
PairState decide_state(const WindowTotals& window, bool at_risk, CaptureCoverage coverage = {}, bool unpaired = false);
std::optional<int> decide_health(const WindowTotals& window, CaptureCoverage coverage = {}, bool unpaired = false);
UnknownReason decide_unknown_reason(const WindowTotals& window, CaptureCoverage coverage = {}, bool unpaired = false);
// The overall health and its reason from the pairs' (after every pair is in: local, remote, levels).
void decide_overall(HealthReport& report);

class HealthTracker {
 public:
  explicit HealthTracker(std::int64_t window_ns, std::int64_t bucket_ns = 1'000'000'000);

  // `clock_bound_ns`: sum of the two hosts' clock error bounds, when both are known.
  void add(const Span& span, std::optional<std::int64_t> clock_bound_ns = std::nullopt);
  // Halves lost for any counted reason, noticed at `now_ns` (CLOCK_MONOTONIC).
  void add_losses(std::int64_t now_ns, std::uint64_t halves) { losses_.add(now_ns, halves); }
  // Once down, the capture stays down: the agent exits and is restarted.
  void set_capture_down() { capture_up_ = false; }
  // `at_risk` says, per pair, whether the estimate or the clock sources put it at risk;
  // `pairing`: the local domains' pairing in the window (PairingWindow::report), if measured.
  HealthReport report(std::int64_t now_ns, const std::function<bool(const PairKey&)>& at_risk = {},
                      std::vector<DomainPairing> pairing = {}) const;
  std::int64_t window_ns() const { return window_ns_; }

 private:
  std::int64_t window_ns_;
  std::int64_t bucket_ns_;
  struct PairData {
    PairWindow window;
    SpanHistograms histograms;
    std::optional<std::int64_t> newest_capture_ns;  // of every span, not only the window's
  };
  std::map<PairKey, PairData> pairs_;
  LossWindow losses_;
  bool capture_up_ = true;
};

}  // namespace skewscope
