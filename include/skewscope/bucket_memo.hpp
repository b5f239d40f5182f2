// The time bucket of the last lookup, for windows that file spans by floor(t / bucket_ns): spans
// arrive nearly in time order, so almost every lookup falls in the same bucket as the one before
// and needs no 64-bit division (two or three of them per span were a tenth of the agent's time).
#pragma once

#include <cstddef>
#include <cstdint>

namespace skewscope {

struct BucketMemo {
  std::int64_t from_ns = 1;  // the bucket covers [from_ns, to_ns); empty until remembered
  std::int64_t to_ns = 0;
  std::int64_t index = 0;
  std::size_t slot = 0;  // where the window's ring keeps that bucket

  bool holds(std::int64_t t) const { return t >= from_ns && t < to_ns; }

  // A bucket whose bounds do not fit in 64 bits (a hostile or synthetic time) is not remembered:
  // the next lookup divides again.
  void remember(std::int64_t bucket_index, std::int64_t bucket_ns, std::size_t ring_slot) {
    std::int64_t from = 0;
    std::int64_t to = 0;
    if (__builtin_mul_overflow(bucket_index, bucket_ns, &from) || __builtin_add_overflow(from, bucket_ns, &to)) {
      from_ns = 1;
      to_ns = 0;
      return;
    }
    from_ns = from;
    to_ns = to;
    index = bucket_index;
    slot = ring_slot;
  }
};

}  // namespace skewscope
