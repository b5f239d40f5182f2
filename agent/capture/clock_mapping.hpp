// CLOCK_MONOTONIC (what BPF stamps) -> CLOCK_REALTIME (what hosts compare), using the mapping
// that was valid when the event was captured: converting with today's mapping would misplace
// events across a clock step or slew.
#pragma once

#include <cstdint>
#include <deque>

namespace skewscope {

// CLOCK_MONOTONIC now, in ns: the clock BPF stamps halves with, and the one windows age by.
std::int64_t monotonic_now_ns();

class MonotonicToRealtime {
 public:
  struct Sample {
    std::int64_t mono_ns;
    std::int64_t real_ns;
  };

  // Reads both clocks now (realtime bracketed by two monotonic reads, taking the midpoint).
  void sample_now();
  void add(Sample s);  // samples must come in increasing mono_ns; kept only when the offset moved

  // Uses the newest sample taken at or before mono_ns; the oldest one for older events.
  // Returns mono_ns unchanged when there is no sample yet. Saturates at the int64 limits.
  std::int64_t to_realtime(std::int64_t mono_ns) const;

  std::size_t size() const { return samples_.size(); }

 private:
  static constexpr std::size_t kKeep = 128;  // clock steps remembered
  static constexpr std::int64_t kStepThresholdNs = 1000;
  std::deque<Sample> samples_;
};

}  // namespace skewscope
