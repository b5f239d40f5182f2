#include <doctest/doctest.h>

#include "health/health_tracker.hpp"
#include "health/pair_window.hpp"
#include "health/span_histogram.hpp"
#include "skewscope/bucket_memo.hpp"

using namespace skewscope;

constexpr std::int64_t kSecond = 1'000'000'000;

TEST_CASE("the window holds the last N buckets, including the current one") {
  PairWindow w(kSecond, 30);
  w.add(0, 100);
  w.add(10 * kSecond, -5);
  w.add(29 * kSecond + 1, 7);
  auto at29 = w.window(29 * kSecond + 5);
  CHECK(at29.spans == 3);
  CHECK(at29.negative_spans == 1);
  CHECK(*at29.min_span_ns == -5);
  auto at30 = w.window(30 * kSecond);  // bucket 0 has left the window
  CHECK(at30.spans == 2);
  auto at40 = w.window(40 * kSecond);  // bucket 10 has left too
  CHECK(at40.spans == 1);
  CHECK(at40.negative_spans == 0);
  CHECK(*at40.min_span_ns == 7);
  auto later = w.window(100 * kSecond);
  CHECK(later.spans == 0);
  CHECK_FALSE(later.min_span_ns);
  CHECK(w.spans() == 3);  // cumulative totals never age
  CHECK(w.negative_spans() == 1);
}

TEST_CASE("a ring slot reused by a newer bucket is not polluted by a late span") {
  PairWindow w(kSecond, 4);
  w.add(5 * kSecond, 10);   // bucket 5 -> slot 1
  w.add(1 * kSecond, -10);  // bucket 1 -> slot 1 too, older: outside the window, cumulative only
  auto t = w.window(5 * kSecond);
  CHECK(t.spans == 1);
  CHECK(t.negative_spans == 0);
  CHECK(w.negative_spans() == 1);
}

TEST_CASE("health is 1 until a negative span, 0 while it is in the window, 1 after it leaves") {
  HealthTracker tracker(30 * kSecond);
  auto span = [](std::int64_t t, std::int64_t value) {
    Span s;
    s.src = 1;
    s.dst = 2;
    s.capture_ns = t;
    s.send_ns = 0;
    s.recv_ns = value;
    return s;
  };
  CHECK(tracker.report(0).health == 1);
  tracker.add(span(kSecond, 50));
  auto r = tracker.report(kSecond);
  CHECK(r.health == 1);
  CHECK(r.pairs.at(0).state == PairState::ok);
  tracker.add(span(2 * kSecond, -1));
  r = tracker.report(3 * kSecond);
  CHECK(r.health == 0);
  CHECK(r.pairs.at(0).state == PairState::violated);
  CHECK(r.pairs.at(0).negative_span_ratio == doctest::Approx(0.5));
  r = tracker.report(40 * kSecond);
  CHECK(r.health == 1);
  CHECK(r.pairs.at(0).state == PairState::unknown);  // nothing in the window any more
  CHECK(r.pairs.at(0).negative_spans == 1);
}

TEST_CASE("state rule") {
  WindowTotals empty, clean{10, 0, 5, {}}, bad{10, 1, -5, {}};
  CHECK(decide_state(empty, false) == PairState::unknown);
  CHECK(decide_state(clean, false) == PairState::ok);
  CHECK(decide_state(clean, true) == PairState::at_risk);
  CHECK(decide_state(bad, true) == PairState::violated);
}

TEST_CASE("span histograms: cumulative buckets, negatives at le=0 and in their own histogram") {
  SpanHistograms h;
  h.observe(-2'000'000);      // -2 ms
  h.observe(30'000);          // 30 us
  h.observe(3'000'000);       // 3 ms
  h.observe(20'000'000'000);  // 20 s: only +Inf
  CHECK(h.duration.count == 4);
  CHECK(h.duration.le(0) == 1);  // le=0
  auto index_of = [](double bound) {
    for (std::size_t i = 0; i < kSpanBucketsSeconds.size(); ++i)
      if (kSpanBucketsSeconds[i] == bound) return i;
    FAIL("no bucket");
    return std::size_t{0};
  };
  CHECK(h.duration.le(index_of(2.5e-5)) == 1);
  CHECK(h.duration.le(index_of(5e-5)) == 2);
  CHECK(h.duration.le(index_of(5e-3)) == 3);
  CHECK(h.duration.le(kSpanBucketsSeconds.size() - 1) == 3);
  CHECK(h.duration.sum_seconds == doctest::Approx(20.00103));
  CHECK(h.negative_magnitude.count == 1);
  CHECK(h.negative_magnitude.le(index_of(2.5e-3)) == 1);
  CHECK(h.negative_magnitude.le(index_of(1e-3)) == 0);
}

TEST_CASE("the remembered bucket answers only inside its bounds, and never for bounds past 64 bits") {
  BucketMemo memo;
  CHECK_FALSE(memo.holds(0));  // empty until remembered
  memo.remember(-2, 1000, 7);  // [-2000, -1000)
  CHECK(memo.holds(-2000));
  CHECK(memo.holds(-1001));
  CHECK_FALSE(memo.holds(-1000));
  CHECK_FALSE(memo.holds(-2001));
  CHECK(memo.slot == 7);
  memo.remember(std::numeric_limits<std::int64_t>::max() / 1000 + 1, 1000, 0);  // overflows
  CHECK_FALSE(memo.holds(0));
  CHECK_FALSE(memo.holds(std::numeric_limits<std::int64_t>::max()));
}

TEST_CASE("spans at the ends of the time range are filed in their buckets, like every other") {
  PairWindow w(1'000'000'000, 4);
  const std::int64_t top = std::numeric_limits<std::int64_t>::max();
  w.add(top, -5);
  w.add(top - 1, 3);
  WindowTotals t = w.window(top);
  CHECK(t.spans == 2);
  CHECK(t.negative_spans == 1);
  CHECK(t.min_span_ns == -5);
  PairWindow low(1'000'000'000, 4);
  low.add(std::numeric_limits<std::int64_t>::min(), 2);
  CHECK(low.window(std::numeric_limits<std::int64_t>::min()).spans == 1);
}
