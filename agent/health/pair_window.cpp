#include "health/pair_window.hpp"

#include <algorithm>

namespace skewscope {

PairWindow::PairWindow(std::int64_t bucket_ns, std::size_t buckets)
    : bucket_ns_(bucket_ns > 0 ? bucket_ns : 1), ring_(buckets > 0 ? buckets : 1) {}

std::int64_t PairWindow::bucket_index(std::int64_t t) const {
  // Floor division: monotonic times are positive, but synthetic tests may start at zero. Not by
  // negating t: -INT64_MIN overflows (UBSan found it with a span stamped at the very bottom).
  const std::int64_t q = t / bucket_ns_;
  return (t % bucket_ns_ != 0 && t < 0) ? q - 1 : q;
}

void PairWindow::add(std::int64_t capture_ns, std::int64_t span_ns, bool unexplained, std::uint64_t times) {
  spans_ += times;
  if (span_ns < 0) negative_spans_ += times;
  if (unexplained) unexplained_ += times;
  std::int64_t index = memo_.index;
  std::size_t slot = memo_.slot;
  if (!memo_.holds(capture_ns)) {
    index = bucket_index(capture_ns);
    const auto size = static_cast<std::int64_t>(ring_.size());
    slot = static_cast<std::size_t>(((index % size) + size) % size);
    memo_.remember(index, bucket_ns_, slot);
  }
  Bucket& b = ring_[slot];
  if (b.index > index) return;  // the slot already holds a newer bucket: too late for the window
  if (b.index != index) b = Bucket{index};
  b.spans += times;
  if (span_ns < 0) b.negative += times;
  b.min_span_ns = std::min(b.min_span_ns, span_ns);
  b.newest_capture_ns = std::max(b.newest_capture_ns, capture_ns);
}

WindowTotals PairWindow::window(std::int64_t now_ns) const {
  WindowTotals t;
  const std::int64_t newest = bucket_index(now_ns);
  const std::int64_t oldest = newest - static_cast<std::int64_t>(ring_.size()) + 1;
  for (const Bucket& b : ring_) {
    if (b.index < oldest || b.index > newest || b.spans == 0) continue;
    t.spans += b.spans;
    t.negative_spans += b.negative;
    t.min_span_ns = t.min_span_ns ? std::min(*t.min_span_ns, b.min_span_ns) : b.min_span_ns;
    t.newest_capture_ns =
        t.newest_capture_ns ? std::max(*t.newest_capture_ns, b.newest_capture_ns) : b.newest_capture_ns;
  }
  return t;
}

}  // namespace skewscope
