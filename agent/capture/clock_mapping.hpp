// CLOCK_MONOTONIC (what BPF stamps) -> CLOCK_REALTIME (what hosts compare), using the mapping
// that was valid when the event was captured: converting with today's mapping would misplace
// events across a clock step or slew. The one mapper of the agent: the core maps every half with
// it (steps only, remembered long), the exchange's producer fixes a shipped half's time with an
// instance that keeps every recent sample and interpolates between the two around the half.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace skewscope {

// CLOCK_MONOTONIC now, in ns: the clock BPF stamps halves with, and the one windows age by.
std::int64_t monotonic_now_ns();

class MonotonicToRealtime {
 public:
  struct Sample {
    std::int64_t mono_ns;
    std::int64_t real_ns;
  };

  // Which samples are kept.
  struct Keep {
    // A sample is kept only when REALTIME - MONOTONIC moved by at least this much since the last
    // kept one (0: every sample).
    std::int64_t step_threshold_ns = 1000;
    std::size_t max_samples = 128;  // clock steps remembered
    // Samples older than this (behind the newest) are dropped, the newest two always kept (0: no
    // age limit).
    std::int64_t max_age_ns = 0;

    // The core's: one sample per clock step, so that halves of any age map with the mapping of
    // their capture, and halves mapped through different samples differ by no read jitter.
    static Keep steps() { return Keep{}; }
    // The exchange producer's: every sample of the last `age_ns`, to interpolate across a slew.
    static Keep recent(std::int64_t age_ns) { return Keep{0, SIZE_MAX, age_ns}; }
  };

  MonotonicToRealtime() = default;
  explicit MonotonicToRealtime(Keep keep) : keep_(keep) {}

  // Reads both clocks now: realtime bracketed by two monotonic reads, the midpoint of the
  // tightest of `reads` such triples (a preempted read would place the sample wrongly).
  void sample_now(int reads = 1);
  void add(Sample s);  // samples must come in increasing mono_ns; see Keep for which are kept

  // Uses the newest sample taken at or before mono_ns; the oldest one for older events.
  // Returns mono_ns unchanged when there is no sample yet. Saturates at the int64 limits.
  std::int64_t to_realtime(std::int64_t mono_ns) const;

  // Interpolates between the two samples around mono_ns, so that a clock being slewed is followed
  // between samples; nothing when no sample was taken before or after it.
  std::optional<std::int64_t> interpolated(std::int64_t mono_ns) const;

  std::size_t size() const { return samples_.size(); }

 private:
  Keep keep_;
  std::deque<Sample> samples_;
};

}  // namespace skewscope
