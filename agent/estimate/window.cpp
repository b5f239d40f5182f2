#include "estimate/window.hpp"

#include <algorithm>

namespace skewscope::estimate {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

PairWindow::PairWindow(std::int64_t bucket_ns, std::size_t buckets, std::size_t samples_per_bucket)
    : bucket_ns_(std::max<std::int64_t>(bucket_ns, 1)),
      samples_per_bucket_(samples_per_bucket),
      ring_(std::max<std::size_t>(buckets, 1)) {}

bool PairWindow::add(int direction, std::int64_t span_ns, std::int64_t capture_ns, std::uint64_t times) {
  const std::int64_t n = static_cast<std::int64_t>(ring_.size());
  std::int64_t idx = memo_.index;
  std::size_t slot = memo_.slot;
  if (!memo_.holds(capture_ns)) {
    idx = floor_div(capture_ns, bucket_ns_);
    slot = static_cast<std::size_t>(idx - floor_div(idx, n) * n);
    memo_.remember(idx, bucket_ns_, slot);
  }
  if (newest_ != kNoBucket && idx <= newest_ - n) return false;
  Bucket& b = ring_[slot];
  if (b.index != idx) {  // the slot holds a bucket that has left the window: recycle it
    b.index = idx;
    for (auto& d : b.dir) {
      d.count = 0;
      d.negative = 0;
      d.sample.clear();
    }
  }
  newest_ = std::max(newest_, idx);

  DirectionBucket& d = b.dir[direction & 1];
  if (d.count == 0 || span_ns < d.min_span_ns) {
    d.min_span_ns = span_ns;
    d.min_at_ns = capture_ns;
  }
  if (span_ns < 0) d.negative += times;
  if (samples_per_bucket_ == 0) {
    d.count += times;
    return true;
  }
  for (std::uint64_t i = 0; i < times; ++i) {
    ++d.count;
    if (d.sample.size() < samples_per_bucket_) {
      d.sample.push_back(span_ns);
    } else {
      std::uint64_t j = splitmix64(rng_) % d.count;
      if (j < samples_per_bucket_) d.sample[j] = span_ns;
    }
  }
  return true;
}

std::vector<const Bucket*> PairWindow::live(std::int64_t now_ns) const {
  const std::int64_t first = floor_div(now_ns, bucket_ns_) - static_cast<std::int64_t>(ring_.size()) + 1;
  std::vector<const Bucket*> out;
  for (const auto& b : ring_)
    if (b.index != kNoBucket && b.index >= first) out.push_back(&b);
  std::sort(out.begin(), out.end(), [](const Bucket* a, const Bucket* b) { return a->index < b->index; });
  return out;
}

}  // namespace skewscope::estimate
