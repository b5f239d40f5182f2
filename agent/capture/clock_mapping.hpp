// CLOCK_MONOTONIC (what BPF stamps) -> CLOCK_REALTIME (what hosts compare), using the mapping
// that was valid when the event was captured: converting with today's mapping would misplace
// events across a clock step.
//
// On Linux, REALTIME - MONOTONIC changes only when the clock is stepped (settimeofday,
// clock_settime, adjtimex ADJ_SETOFFSET, a leap second): NTP's slewing changes the rate of both
// clocks alike. So the mapping is a list of segments, one offset each, and a reading of the two
// clocks does not give the offset, it bounds it: REALTIME read between two MONOTONIC reads puts
// the offset in [real - after, real - before]. A segment's offset is the intersection of all its
// readings' bounds, so a reading delayed by preemption or a slow (non-vDSO) clock read widens
// nothing and shifts nothing, and two agents on one kernel agree to within their tightest
// readings (tens of ns with the vDSO) however noisy their reads were. A reading whose bounds miss
// the segment's by more than `step_threshold_ns` opens a new segment: the clock was stepped, at
// an unknown moment between two readings, across which the offset is interpolated.
//
// The one mapper of the agent: the core maps every half with it; the exchange's producer keeps its
// own instance, sampled every few ms, so that a step is placed to within its sampling interval.
#pragma once

#include <cstdint>
#include <deque>

namespace skewscope {

// CLOCK_MONOTONIC now, in ns: the clock BPF stamps halves with, and the one windows age by.
std::int64_t monotonic_now_ns();

class MonotonicToRealtime {
 public:
  // CLOCK_REALTIME read at CLOCK_MONOTONIC mono_ns, give or take uncertainty_ns (half the time
  // the bracketing MONOTONIC reads were apart; 0 for an exact sample).
  struct Sample {
    std::int64_t mono_ns = 0;
    std::int64_t real_ns = 0;
    std::int64_t uncertainty_ns = 0;
  };

  struct Keep {
    // Bounds that miss the current segment's by more than this are a step; by less (the two
    // clocks' rounding, a reading a few ns off), the newest reading's bounds replace the
    // segment's, so that a drift too small to be a step is followed instead of ignored.
    std::int64_t step_threshold_ns = 1000;
    std::size_t max_segments = 128;  // clock steps remembered
  };

  // Where the mapping stands, for the status (`realtime_mapping`).
  struct Stats {
    std::uint64_t readings = 0;
    std::uint64_t steps = 0;  // segments opened after the first: the clock was stepped
    // Half the width of the current segment's bounds: how far its offset may be from the truth.
    std::int64_t uncertainty_ns = 0;
  };

  MonotonicToRealtime() = default;
  explicit MonotonicToRealtime(Keep keep) : keep_(keep) {}

  // Reads both clocks `reads` times (REALTIME between two MONOTONIC reads each time) and adds
  // the tightest reading: the others' bounds would contain it anyway.
  void sample_now(int reads = 3);
  // Samples must come in increasing mono_ns; an older one is ignored.
  void add(Sample s);

  // The offset of the segment holding mono_ns (the oldest one for older events); between the last
  // reading of one segment and the first of the next, the offset interpolated between theirs.
  // Returns mono_ns unchanged when there is no sample yet. Saturates at the int64 limits.
  std::int64_t to_realtime(std::int64_t mono_ns) const;
  // A sample was taken at or before mono_ns: to_realtime(mono_ns) comes from a reading of this
  // mapping, not from the oldest segment stretched backwards.
  bool covers(std::int64_t mono_ns) const { return !segments_.empty() && segments_.front().from_mono_ns <= mono_ns; }

  std::size_t size() const { return segments_.size(); }
  Stats stats() const;

 private:
  struct Segment {
    std::int64_t from_mono_ns;    // the reading that opened it (a step happened before it)
    std::int64_t newest_mono_ns;  // its newest reading
    std::int64_t low_ns;          // the offset REALTIME - MONOTONIC is in [low_ns, high_ns]
    std::int64_t high_ns;
    std::int64_t offset_ns;  // the middle of the bounds, kept: every half is mapped through it
    void set_bounds(std::int64_t low, std::int64_t high);
  };

  Keep keep_;
  std::deque<Segment> segments_;
  std::uint64_t readings_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace skewscope
