// Sliding-window statistics of one (src, dst, transport): time buckets in a ring, so memory is
// fixed and old spans age out without being stored one by one.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "skewscope/bucket_memo.hpp"

namespace skewscope {

struct WindowTotals {
  std::uint64_t spans = 0;
  std::uint64_t negative_spans = 0;
  std::optional<std::int64_t> min_span_ns;
  std::optional<std::int64_t> newest_capture_ns;  // CLOCK_MONOTONIC of the window's latest span
};

class PairWindow {
 public:
  // The window covers the last `buckets` buckets of `bucket_ns` each, the current one included.
  PairWindow(std::int64_t bucket_ns, std::size_t buckets);

  // capture_ns orders spans in true time (CLOCK_MONOTONIC); late spans older than the window
  // still count in the cumulative totals but not in the window.
  // `unexplained`: a negative span larger than the two hosts' declared clock error bounds allow.
  // `times`: the spans this one stands for (Span::messages), all of the same value.
  void add(std::int64_t capture_ns, std::int64_t span_ns, bool unexplained = false, std::uint64_t times = 1);
  WindowTotals window(std::int64_t now_ns) const;

  std::uint64_t spans() const { return spans_; }
  std::uint64_t negative_spans() const { return negative_spans_; }
  std::uint64_t unexplained_negative_spans() const { return unexplained_; }

 private:
  struct Bucket {
    std::int64_t index = std::numeric_limits<std::int64_t>::min();
    std::uint64_t spans = 0;
    std::uint64_t negative = 0;
    std::int64_t min_span_ns = std::numeric_limits<std::int64_t>::max();
    std::int64_t newest_capture_ns = std::numeric_limits<std::int64_t>::min();
  };
  std::int64_t bucket_index(std::int64_t t) const;

  std::int64_t bucket_ns_;
  std::vector<Bucket> ring_;
  std::uint64_t spans_ = 0;
  std::uint64_t negative_spans_ = 0;
  std::uint64_t unexplained_ = 0;
  BucketMemo memo_;
};

}  // namespace skewscope
