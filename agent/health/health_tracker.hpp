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
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "health/loss_window.hpp"
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
  std::optional<int> health = 1;   // null: cannot know (see the rule above)
  PairState state = PairState::unknown;
  std::uint64_t window_lost_halves = 0;          // halves lost in the window (by any counted reason)
  bool capture_complete = true;                  // capture up and nothing lost in the window
  std::optional<std::int64_t> last_span_age_ns;  // since the window's newest span; null when none
};

struct HealthReport {
  std::optional<int> health = 1;  // 0 when any pair is violated; null when the agent cannot know
  std::int64_t window_ns = 0;
  bool capture_up = true;
  std::uint64_t window_lost_halves = 0;
  std::vector<PairReport> pairs;  // ordered by (src, dst, transport)
};

// What the capture could see over a window.
struct CaptureCoverage {
  bool up = true;        // the event source is alive
  bool complete = true;  // no half was lost in the window
};

// The state and health rules in one place. `at_risk` comes from the estimate and clock stages.
PairState decide_state(const WindowTotals& window, bool at_risk, CaptureCoverage coverage = {});
std::optional<int> decide_health(const WindowTotals& window, CaptureCoverage coverage = {});

class HealthTracker {
 public:
  explicit HealthTracker(std::int64_t window_ns, std::int64_t bucket_ns = 1'000'000'000);

  // `clock_bound_ns`: sum of the two hosts' clock error bounds, when both are known.
  void add(const Span& span, std::optional<std::int64_t> clock_bound_ns = std::nullopt);
  // Halves lost for any counted reason, noticed at `now_ns` (CLOCK_MONOTONIC).
  void add_losses(std::int64_t now_ns, std::uint64_t halves) { losses_.add(now_ns, halves); }
  // Once down, the capture stays down: the agent exits and is restarted.
  void set_capture_down() { capture_up_ = false; }
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
  LossWindow losses_;
  bool capture_up_ = true;
};

}  // namespace skewscope
