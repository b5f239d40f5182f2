#include "capture/clock_mapping.hpp"

#include <time.h>

#include <algorithm>

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

void MonotonicToRealtime::sample_now() {
  std::int64_t before = read_ns(CLOCK_MONOTONIC);
  std::int64_t real = read_ns(CLOCK_REALTIME);
  std::int64_t after = read_ns(CLOCK_MONOTONIC);
  add(Sample{before + (after - before) / 2, real});
}

void MonotonicToRealtime::add(Sample s) {
  if (!samples_.empty()) {
    const Sample& last = samples_.back();
    if (s.mono_ns <= last.mono_ns) return;
    // REALTIME - MONOTONIC only changes when the clock is stepped (slewing moves both clocks).
    // Keeping every sample would add tens of ns of read jitter between events mapped through
    // different samples, so a sample is kept only when the offset really moved.
    std::int64_t moved = sat_sub(sat_sub(s.real_ns, s.mono_ns), sat_sub(last.real_ns, last.mono_ns));
    if (moved > -kStepThresholdNs && moved < kStepThresholdNs) return;
  }
  samples_.push_back(s);
  if (samples_.size() > kKeep) samples_.pop_front();
}

std::int64_t MonotonicToRealtime::to_realtime(std::int64_t mono_ns) const {
  if (samples_.empty()) return mono_ns;
  auto it = std::upper_bound(samples_.begin(), samples_.end(), mono_ns,
                             [](std::int64_t t, const Sample& s) { return t < s.mono_ns; });
  const Sample& s = it == samples_.begin() ? *it : *std::prev(it);
  // Saturated: a corrupt capture time far from the sample must not wrap into another era.
  return sat_add(s.real_ns, sat_sub(mono_ns, s.mono_ns));
}

}  // namespace skewscope
