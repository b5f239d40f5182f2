// Bounded sliding window of one unordered domain pair's spans, kept in time buckets.
//
// Each bucket keeps, per direction, only what the estimator needs: the fastest message (its span
// and when it arrived — NTP's clock filter and Huygens both lean on the minimum-delay messages,
// because queueing only ever adds delay), counts, and a small uniform sample of spans for the
// what-if analysis. Memory is fixed at construction: buckets × 2 × samples_per_bucket spans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "skewscope/bucket_memo.hpp"

namespace skewscope::estimate {

inline constexpr std::int64_t kNoBucket = std::numeric_limits<std::int64_t>::min();

struct DirectionBucket {
  std::int64_t min_span_ns = 0;
  std::int64_t min_at_ns = 0;  // capture time of the fastest message: its constraint holds at that time
  std::uint64_t count = 0;
  std::uint64_t negative = 0;
  std::vector<std::int64_t> sample;  // uniform reservoir (Algorithm R) of this bucket's spans
};

struct Bucket {
  std::int64_t index = kNoBucket;  // floor(capture_ns / bucket_ns)
  DirectionBucket dir[2];          // [0]: low id → high id, [1]: high id → low id
};

class PairWindow {
 public:
  PairWindow(std::int64_t bucket_ns, std::size_t buckets, std::size_t samples_per_bucket);

  // False when capture_ns is older than the window that ends at the newest data seen: such a span
  // can no longer change any estimate, and keeping it would need an unbounded history.
  // `times`: the spans this one stands for (Span::messages), all of this value: each counts and
  // takes its turn in the reservoir, as it would one by one.
  bool add(int direction, std::int64_t span_ns, std::int64_t capture_ns, std::uint64_t times = 1);

  // Buckets inside the window that ends at now_ns, oldest first. Data stamped after now_ns (a
  // caller's clock read slightly behind the capture) is kept rather than silently ignored.
  std::vector<const Bucket*> live(std::int64_t now_ns) const;

  std::int64_t bucket_ns() const { return bucket_ns_; }
  std::size_t buckets() const { return ring_.size(); }

 private:
  std::int64_t bucket_ns_;
  std::size_t samples_per_bucket_;
  std::vector<Bucket> ring_;
  std::int64_t newest_ = kNoBucket;
  std::uint64_t rng_ = 0x9e3779b97f4a7c15ULL;  // fixed seed: same input, same sample, same tables
  BucketMemo memo_;
};

// Floor division for possibly negative times.
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace skewscope::estimate
