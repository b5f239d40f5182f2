// Nanosecond arithmetic from capture to span clamps instead of wrapping: a simulated offset, a
// corrupt capture time or a far-off clock sample can push a timestamp to the int64 limit, never
// past it into a negative time.
#include <doctest/doctest.h>

#include <limits>

#include "capture/clock_mapping.hpp"
#include "correlate/correlator.hpp"
#include "domains/domain_spec.hpp"
#include "domains/simulated_clocks.hpp"
#include "skewscope/saturating.hpp"

using namespace skewscope;

namespace {
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kWall = 1'764'556'800'000'000'000;  // 2025-12-01 in ns since the epoch
}  // namespace

TEST_CASE("saturating helpers") {
  CHECK(sat_add(1, 2) == 3);
  CHECK(sat_add(kMax, 1) == kMax);
  CHECK(sat_add(kMin, -1) == kMin);
  CHECK(sat_add(kMax, kMin) == -1);
  CHECK(sat_sub(5, 7) == -2);
  CHECK(sat_sub(kMin, 1) == kMin);
  CHECK(sat_sub(kMax, -1) == kMax);
  CHECK(sat_sub(0, kMin) == kMax);
  CHECK(sat_mul(2, 21) == 42);
  CHECK(sat_mul(2, kMax) == kMax);
  CHECK(sat_mul(-2, kMax) == kMin);
  CHECK(sat_mul(-2, kMin) == kMax);
  CHECK(sat_round(1.4) == 1);
  CHECK(sat_round(-1.6) == -2);
  CHECK(sat_round(9.3e18) == kMax);  // a plain cast gives INT64_MIN on x86
  CHECK(sat_round(-9.3e18) == kMin);
  CHECK(sat_round(std::numeric_limits<double>::infinity()) == kMax);
  CHECK(sat_round(std::numeric_limits<double>::quiet_NaN()) == 0);
}

TEST_CASE("simulated clocks: offsets and drift saturate, and setting beyond the limits clamps") {
  SimulatedClocks clocks;
  clocks.set(1, 5'000'000, 0, 0);
  CHECK(clocks.apply(1, 1000, kWall) == kWall + 5'000'000);
  CHECK(clocks.apply(0, 1000, kWall) == kWall);  // a domain never set
  // A hostile offset (2555555h) is clamped to the parser's limit, and the sum stays positive.
  clocks.set(2, 2'555'555LL * 3'600'000'000'000, 0, 0);
  CHECK(clocks.setting(2).offset_ns == kMaxSimulatedOffsetNs);
  CHECK(clocks.apply(2, 0, kWall) == kWall + kMaxSimulatedOffsetNs);
  clocks.set(3, -2'555'555LL * 3'600'000'000'000, -1e9, 0);
  CHECK(clocks.setting(3).offset_ns == -kMaxSimulatedOffsetNs);
  CHECK(clocks.setting(3).drift_ppm == -kMaxSimulatedDriftPpm);
  // Drift over an absurd time span saturates instead of overflowing the double-to-int conversion.
  clocks.set(4, 0, kMaxSimulatedDriftPpm, kMin);
  CHECK(clocks.error_ns(4, kMax) > 0);
  CHECK(clocks.apply(4, kMax, kMax) == kMax);
  clocks.set(5, 0, -kMaxSimulatedDriftPpm, kMin);
  CHECK(clocks.apply(5, kMax, kMin) == kMin);
}

TEST_CASE("monotonic to realtime saturates far from its sample") {
  MonotonicToRealtime m;
  m.add({1'000, kWall});
  CHECK(m.to_realtime(2'000) == kWall + 1'000);
  CHECK(m.to_realtime(kMax) == kMax);  // a corrupt capture time far ahead
  MonotonicToRealtime behind;
  behind.add({kMax - 10, -5});
  CHECK(behind.to_realtime(kMin) == kMin);
  // A later sample with an offset change that would overflow is kept (it is a step) without UB.
  behind.add({kMax, kMax});
  CHECK(behind.size() == 2);
}

TEST_CASE("the correlator ages halves with saturated arithmetic") {
  Correlator c(CorrelatorLimits{16, 1'000'000'000, 1'000'000'000});
  Half send;
  send.kind = HalfKind::send;
  send.capture_ns = kMin + 5;  // corrupt: would overflow now - capture
  send.bytes = 10;
  std::vector<Span> out;
  c.add(send, out);
  CHECK(c.pending_sends() == 1);
  c.expire(kMax);
  CHECK(c.pending_sends() == 0);
  CHECK(c.counters().sends_expired == 1);
}
