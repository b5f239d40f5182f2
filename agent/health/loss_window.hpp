// Halves lost (by any counted reason) per time bucket, over the health window: a window that lost
// halves may have lost the one negative span that would have made a pair violated.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace skewscope {

class LossWindow {
 public:
  LossWindow(std::int64_t bucket_ns, std::size_t buckets);

  // `now_ns` is when the loss was noticed (CLOCK_MONOTONIC). Counters are read a few times a
  // second, so a loss is noticed at or after it happened: it stays in the window at least as long
  // as the halves it took would have.
  void add(std::int64_t now_ns, std::uint64_t halves);
  std::uint64_t in_window(std::int64_t now_ns) const;

 private:
  struct Bucket {
    std::int64_t index = std::numeric_limits<std::int64_t>::min();
    std::uint64_t halves = 0;
  };
  std::int64_t bucket_ns_;
  std::vector<Bucket> ring_;
};

}  // namespace skewscope
