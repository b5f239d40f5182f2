// Distribution of span durations per pair, as Prometheus classic histograms: buckets from 1 us
// (one switch hop) to 10 s (a backed-up broker), and a bucket at 0 so negative spans show in the
// duration histogram; their magnitudes get a histogram of their own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace skewscope {

inline constexpr std::array<double, 23> kSpanBucketsSeconds{0,      1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4,
                                                            2.5e-4, 5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2,
                                                            0.1,    0.25, 0.5,    1,      2.5,  5,      10};

struct Histogram {
  // Observations in each bucket alone, (bound[i-1], bound[i]]: one increment per observation.
  // The cumulative counts Prometheus wants are summed when read (le), per scrape, not per span.
  std::array<std::uint64_t, kSpanBucketsSeconds.size()> in_bucket{};
  std::uint64_t count = 0;
  double sum_seconds = 0;

  void observe(double seconds, std::uint64_t times = 1);  // `times` observations of one value
  void merge(const Histogram& other);
  std::uint64_t le(std::size_t bucket) const;  // observations <= kSpanBucketsSeconds[bucket]
};

struct SpanHistograms {
  Histogram duration;            // every span, negative ones included
  Histogram negative_magnitude;  // |span| of the negative spans

  void observe(std::int64_t span_ns, std::uint64_t times = 1);
  void merge(const SpanHistograms& other);
};

}  // namespace skewscope
