#include "health/span_histogram.hpp"

#include <algorithm>

namespace skewscope {

void Histogram::observe(double seconds, std::uint64_t times) {
  count += times;
  sum_seconds += seconds * static_cast<double>(times);
  // The first bound >= seconds; past the last one the observation is only in count (+Inf).
  const auto bound = std::lower_bound(kSpanBucketsSeconds.begin(), kSpanBucketsSeconds.end(), seconds);
  if (bound != kSpanBucketsSeconds.end())
    in_bucket[static_cast<std::size_t>(bound - kSpanBucketsSeconds.begin())] += times;
}

std::uint64_t Histogram::le(std::size_t bucket) const {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i <= bucket && i < in_bucket.size(); ++i) sum += in_bucket[i];
  return sum;
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < in_bucket.size(); ++i) in_bucket[i] += other.in_bucket[i];
  count += other.count;
  sum_seconds += other.sum_seconds;
}

void SpanHistograms::observe(std::int64_t span_ns, std::uint64_t times) {
  const double seconds = static_cast<double>(span_ns) * 1e-9;
  duration.observe(seconds, times);
  if (span_ns < 0) negative_magnitude.observe(-seconds, times);
}

void SpanHistograms::merge(const SpanHistograms& other) {
  duration.merge(other.duration);
  negative_magnitude.merge(other.negative_magnitude);
}

}  // namespace skewscope
