#include "capture/clock_mapping.hpp"

#include <time.h>

#include <algorithm>
#include <climits>

#include "skewscope/saturating.hpp"

namespace skewscope {
namespace {

std::int64_t read_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

std::int64_t monotonic_now_ns() { return read_ns(CLOCK_MONOTONIC); }

void MonotonicToRealtime::sample_now(int reads) {
  std::int64_t best_gap = INT64_MAX;
  Sample best{};
  for (int i = 0; i < std::max(reads, 1); ++i) {
    const std::int64_t before = read_ns(CLOCK_MONOTONIC);
    const std::int64_t real = read_ns(CLOCK_REALTIME);
    const std::int64_t after = read_ns(CLOCK_MONOTONIC);
    if (after - before < best_gap) {
      best_gap = after - before;
      // Rounded up: the bounds must hold the REALTIME read wherever between the two it fell.
      best = Sample{before + (after - before) / 2, real, (after - before + 1) / 2};
    }
  }
  add(best);
}

void MonotonicToRealtime::add(Sample s) {
  if (!segments_.empty() && s.mono_ns <= segments_.back().newest_mono_ns) return;
  ++readings_;
  const std::int64_t offset = sat_sub(s.real_ns, s.mono_ns);
  const std::int64_t uncertainty = std::max<std::int64_t>(s.uncertainty_ns, 0);
  const std::int64_t low = sat_sub(offset, uncertainty), high = sat_add(offset, uncertainty);
  if (!segments_.empty()) {
    Segment& current = segments_.back();
    // How far this reading's bounds are from the segment's (0 when they overlap).
    const std::int64_t apart =
        std::max({sat_sub(low, current.high_ns), sat_sub(current.low_ns, high), std::int64_t{0}});
    if (apart <= keep_.step_threshold_ns) {
      current.newest_mono_ns = s.mono_ns;
      if (apart == 0) {
        current.set_bounds(std::max(current.low_ns, low), std::min(current.high_ns, high));
      } else {
        current.set_bounds(low, high);
      }
      return;
    }
    ++steps_;
  }
  segments_.push_back(Segment{s.mono_ns, s.mono_ns, 0, 0, 0});
  segments_.back().set_bounds(low, high);
  if (segments_.size() > keep_.max_segments) segments_.pop_front();
}

std::int64_t MonotonicToRealtime::to_realtime(std::int64_t mono_ns) const {
  if (segments_.empty()) return mono_ns;
  // Saturated: a corrupt capture time far from the segment must not wrap into another era.
  if (mono_ns >= segments_.back().from_mono_ns) return sat_add(mono_ns, segments_.back().offset_ns);
  auto next = std::upper_bound(segments_.begin(), segments_.end(), mono_ns,
                               [](std::int64_t t, const Segment& s) { return t < s.from_mono_ns; });
  if (next == segments_.begin()) return sat_add(mono_ns, next->offset_ns);
  const Segment& segment = *std::prev(next);
  if (mono_ns <= segment.newest_mono_ns) return sat_add(mono_ns, segment.offset_ns);
  // Between the last reading before a step and the first after it: when the step happened is not
  // known, so the offset goes linearly from one to the other. A single step is then placed no
  // worse than by either offset, and a clock moved by many small steps (a catch-up) is followed.
  const long double f = static_cast<long double>(mono_ns - segment.newest_mono_ns) /
                        static_cast<long double>(next->from_mono_ns - segment.newest_mono_ns);
  const long double moved = static_cast<long double>(next->offset_ns) - static_cast<long double>(segment.offset_ns);
  return sat_add(sat_add(mono_ns, segment.offset_ns), static_cast<std::int64_t>(f * moved));
}

void MonotonicToRealtime::Segment::set_bounds(std::int64_t low, std::int64_t high) {
  low_ns = low;
  high_ns = high;
  offset_ns = sat_add(low, sat_sub(high, low) / 2);
}

MonotonicToRealtime::Stats MonotonicToRealtime::stats() const {
  Stats out{readings_, steps_, 0};
  if (!segments_.empty())
    out.uncertainty_ns = sat_add(sat_sub(segments_.back().high_ns, segments_.back().low_ns), 1) / 2;
  return out;
}

}  // namespace skewscope
