#include "capture/rdma_nic_clock.hpp"

#include <algorithm>
#include <cmath>

namespace skewscope::rdma {
namespace {

// A sample's host time is its bracket's end: the raw clock was read no later than that, so a
// stamp mapped through it is never placed before the completion happened (with one clock, the
// offset cannot turn a span negative); it may be placed up to the bracket's width late. The
// midpoint would halve the worst case but not the typical one: the uprobe's entry path (after
// its program reads the time) is slower than its return path (before it does), so the read sits
// late in the bracket, and a midpoint puts stamps early: negative spans, seen in the lab.
long double host_time(const NicClockSample& s) { return static_cast<long double>(s.after_ns); }
long double width(const NicClockSample& s) { return static_cast<long double>(s.after_ns - s.before_ns); }

}  // namespace

bool NicClock::add(const NicClockSample& sample) {
  if (sample.after_ns < sample.before_ns) return false;
  if (!samples_.empty()) {
    const NicClockSample& last = samples_.back();
    if (sample.before_ns <= last.after_ns) return false;  // overlapping calls: which read came first is unknown
    if (sample.raw <= last.raw) {
      // The NIC clock was reset (or is not a clock): what was learnt of it no longer holds.
      samples_.clear();
      samples_.push_back(sample);
      return false;
    }
  }
  samples_.push_back(sample);
  while (samples_.size() > kMaxSamples ||
         (samples_.size() > 2 && samples_.back().after_ns - samples_.front().before_ns > kWindowNs))
    samples_.pop_front();
  return true;
}

Result<NicMapping, NicMapError> NicClock::to_monotonic(std::uint64_t raw) const {
  using R = Result<NicMapping, NicMapError>;
  if (samples_.empty()) return R::fail(NicMapError::no_samples);
  if (samples_.size() < 2) return R::fail(NicMapError::one_sample);
  // The rate from the pair (one of the oldest few, one of the newest few) that measures it best:
  // the longest baseline for the narrowest brackets (a call that was descheduled is wide).
  const std::size_t k = std::min(kAnchorCandidates, samples_.size());
  const NicClockSample *from = nullptr, *to = nullptr;
  long double best = -1;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = samples_.size() - k; j < samples_.size(); ++j) {
      if (j <= i) continue;
      const NicClockSample &a = samples_[i], &b = samples_[j];
      const long double quality = (host_time(b) - host_time(a)) / (width(a) + width(b) + 1);
      if (quality > best) best = quality, from = &a, to = &b;
    }
  const long double baseline = host_time(*to) - host_time(*from);
  if (baseline < kMinBaselineNs) return R::fail(NicMapError::short_baseline);
  const long double rate = static_cast<long double>(to->raw - from->raw) / baseline;  // cycles per host ns
  const long double rate_error = (width(*from) + width(*to)) / baseline;              // relative
  // The offset from the narrowest recent bracket.
  const NicClockSample* anchor = &samples_.back();
  for (std::size_t i = 0; i < k; ++i) {
    const NicClockSample& s = samples_[samples_.size() - 1 - i];
    if (width(s) < width(*anchor)) anchor = &s;
  }
  const long double cycles = static_cast<long double>(raw) - static_cast<long double>(anchor->raw);
  const long double distance_ns = cycles / rate;
  NicMapping m;
  m.monotonic_ns = std::llround(host_time(*anchor) + distance_ns);
  m.error_bound_ns = std::llround(std::ceil(width(*anchor) + std::fabs(distance_ns) * rate_error));
  return R::ok(m);
}

const char* nic_map_error_name(NicMapError e) {
  switch (e) {
    case NicMapError::no_samples: return "no clock sample";
    case NicMapError::one_sample: return "one clock sample";
    case NicMapError::short_baseline: return "clock samples too close together";
  }
  return "unknown";
}

StampOutcome resolve_stamp(skewscope_rdma_event& e, const NicClock* clock, std::int64_t realtime_minus_monotonic_ns) {
  e.ts_source = SKEWSCOPE_RDMA_TS_PROBE;
  if (e.kind != SKEWSCOPE_RDMA_RECV) return StampOutcome::probe;
  const auto probe_ns = static_cast<std::int64_t>(e.ts_ns);
  std::int64_t mapped = 0, tolerance = 0;
  std::uint8_t source = 0;
  switch (e.nic_stamp) {
    case SKEWSCOPE_RDMA_NIC_UNREAD: return StampOutcome::not_read;
    case SKEWSCOPE_RDMA_NIC_WALLCLOCK:
      mapped = static_cast<std::int64_t>(e.nic_ts) - realtime_minus_monotonic_ns;
      tolerance = kWallclockToleranceNs;
      source = SKEWSCOPE_RDMA_TS_NIC_WALLCLOCK;
      break;
    case SKEWSCOPE_RDMA_NIC_RAW: {
      if (!clock) return StampOutcome::no_clock;
      auto m = clock->to_monotonic(e.nic_ts);
      if (!m) return StampOutcome::no_clock;
      mapped = m->monotonic_ns;
      tolerance = m->error_bound_ns;
      source = SKEWSCOPE_RDMA_TS_NIC_COMPLETION;
      break;
    }
    default: return StampOutcome::probe;
  }
  // The completion happened before the poll that returned it, and not ages before.
  if (mapped > probe_ns + tolerance || mapped < probe_ns - kMaxCompletionAgeNs || mapped <= 0)
    return StampOutcome::implausible;
  e.ts_ns = static_cast<std::uint64_t>(mapped);
  e.ts_source = source;
  return source == SKEWSCOPE_RDMA_TS_NIC_WALLCLOCK ? StampOutcome::nic_wallclock : StampOutcome::nic_completion;
}

}  // namespace skewscope::rdma
