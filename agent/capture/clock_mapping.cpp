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
      best = Sample{before + (after - before) / 2, real};
    }
  }
  add(best);
}

void MonotonicToRealtime::add(Sample s) {
  if (!samples_.empty()) {
    const Sample& last = samples_.back();
    if (s.mono_ns <= last.mono_ns) return;
    // REALTIME - MONOTONIC only changes when the clock is stepped or slewed. For the core's
    // mapping, keeping every sample would add tens of ns of read jitter between events mapped
    // through different samples, so a sample is kept only when the offset really moved.
    std::int64_t moved = sat_sub(sat_sub(s.real_ns, s.mono_ns), sat_sub(last.real_ns, last.mono_ns));
    if (moved > -keep_.step_threshold_ns && moved < keep_.step_threshold_ns) return;
  }
  samples_.push_back(s);
  if (samples_.size() > keep_.max_samples) samples_.pop_front();
  if (keep_.max_age_ns > 0) {
    while (samples_.size() > 2 && s.mono_ns - samples_.front().mono_ns > keep_.max_age_ns) samples_.pop_front();
  }
}

std::int64_t MonotonicToRealtime::to_realtime(std::int64_t mono_ns) const {
  if (samples_.empty()) return mono_ns;
  auto it = std::upper_bound(samples_.begin(), samples_.end(), mono_ns,
                             [](std::int64_t t, const Sample& s) { return t < s.mono_ns; });
  const Sample& s = it == samples_.begin() ? *it : *std::prev(it);
  // Saturated: a corrupt capture time far from the sample must not wrap into another era.
  return sat_add(s.real_ns, sat_sub(mono_ns, s.mono_ns));
}

std::optional<std::int64_t> MonotonicToRealtime::interpolated(std::int64_t mono_ns) const {
  auto it = std::lower_bound(samples_.begin(), samples_.end(), mono_ns,
                             [](const Sample& s, std::int64_t t) { return s.mono_ns < t; });
  if (it == samples_.begin() || it == samples_.end()) return std::nullopt;  // not bracketed
  const Sample& a = *std::prev(it);
  const Sample& b = *it;
  const double f = static_cast<double>(mono_ns - a.mono_ns) / static_cast<double>(b.mono_ns - a.mono_ns);
  return a.real_ns + (mono_ns - a.mono_ns) +
         static_cast<std::int64_t>(f * static_cast<double>((b.real_ns - b.mono_ns) - (a.real_ns - a.mono_ns)));
}

}  // namespace skewscope
