// Nanosecond arithmetic that clamps at the int64 limits instead of wrapping. Timestamps and
// offsets can come from hostile or broken input (a control-socket command, a ptp4l reply, a
// corrupt record); wrapping would turn a huge value into a negative time or flip a span's sign,
// which reads as a plausible clock error. A clamped value stays visibly absurd instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace skewscope {

inline constexpr std::int64_t kNsMax = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kNsMin = std::numeric_limits<std::int64_t>::min();

constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kNsMax : kNsMin;
  return r;
}

constexpr std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kNsMax : kNsMin;
  return r;
}

constexpr std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? kNsMin : kNsMax;
  return r;
}

// Nearest int64 to x, clamped to the limits. A plain static_cast or llround of a double outside
// the int64 range is undefined (on x86 it yields INT64_MIN: a huge positive bound turns negative).
// NaN has no nearest value: it maps to 0, so callers that can produce NaN must check first.
inline std::int64_t sat_round(double x) {
  constexpr double kTwo63 = 9223372036854775808.0;  // 2^63, exact in a double
  if (std::isnan(x)) return 0;
  if (x >= kTwo63) return kNsMax;
  if (x <= -kTwo63) return kNsMin;
  return std::llround(x);
}

}  // namespace skewscope
