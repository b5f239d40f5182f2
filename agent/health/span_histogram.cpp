#include "health/span_histogram.hpp"

namespace skewscope {

void Histogram::observe(double seconds) {
  ++count;
  sum_seconds += seconds;
  for (std::size_t i = 0; i < kSpanBucketsSeconds.size(); ++i)
    if (seconds <= kSpanBucketsSeconds[i]) ++le[i];
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < le.size(); ++i) le[i] += other.le[i];
  count += other.count;
  sum_seconds += other.sum_seconds;
}

void SpanHistograms::observe(std::int64_t span_ns) {
  const double seconds = static_cast<double>(span_ns) * 1e-9;
  duration.observe(seconds);
  if (span_ns < 0) negative_magnitude.observe(-seconds);
}

void SpanHistograms::merge(const SpanHistograms& other) {
  duration.merge(other.duration);
  negative_magnitude.merge(other.negative_magnitude);
}

}  // namespace skewscope
