#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "estimate/window.hpp"

using skewscope::estimate::PairWindow;

TEST_CASE("the estimate window files spans by bucket, also where a bucket's bounds pass 64 bits") {
  PairWindow w(1'000'000'000, 4, 8);
  const std::int64_t top = std::numeric_limits<std::int64_t>::max();
  CHECK(w.add(0, 7, top));
  CHECK(w.add(1, -3, top - 1));
  auto live = w.live(top);
  REQUIRE(live.size() == 1);
  CHECK(live[0]->dir[0].count == 1);
  CHECK(live[0]->dir[0].min_span_ns == 7);
  CHECK(live[0]->dir[1].count == 1);
  CHECK(live[0]->dir[1].negative == 1);
}

TEST_CASE("consecutive spans of one bucket share it; the next second opens the next one") {
  PairWindow w(1'000'000'000, 3, 8);
  for (std::int64_t t = 0; t < 3'000'000'000; t += 250'000'000) CHECK(w.add(0, t / 1000, t));
  auto live = w.live(2'999'999'999);
  REQUIRE(live.size() == 3);
  for (const auto* b : live) CHECK(b->dir[0].count == 4);
  CHECK(live[2]->dir[0].min_span_ns == 2'000'000);
  CHECK(w.add(0, 1, 0));  // still inside: the window ends at the newest data seen
  CHECK(w.add(0, 1, 3'000'000'000));
  CHECK_FALSE(w.add(0, 1, 999'999'999));  // the first second left it when the fourth began
}

TEST_CASE("a span standing for a run of messages is counted and sampled as that many spans") {
  // The reservoir draws once per message either way, so both windows hold the same sample.
  PairWindow runs(1'000'000'000, 4, 8), singles(1'000'000'000, 4, 8);
  std::int64_t value = 100;
  for (std::uint64_t times : {5u, 1u, 17u, 3u, 40u}) {
    CHECK(runs.add(0, value, 10, times));
    for (std::uint64_t i = 0; i < times; ++i) CHECK(singles.add(0, value, 10));
    value -= 60;  // some of them negative
  }
  const auto a = runs.live(10), b = singles.live(10);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(a[0]->dir[0].count == 66);
  CHECK(a[0]->dir[0].negative == b[0]->dir[0].negative);
  CHECK(a[0]->dir[0].negative == 17 + 3 + 40);
  CHECK(a[0]->dir[0].min_span_ns == b[0]->dir[0].min_span_ns);
  CHECK(a[0]->dir[0].sample == b[0]->dir[0].sample);
  CHECK(a[0]->dir[0].sample.size() == 8);
}
