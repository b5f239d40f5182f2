#include <doctest/doctest.h>

#include <cmath>

#include "diagnose/pair_history.hpp"

using namespace skewscope::diagnose;

namespace {
constexpr std::int64_t kSecond = 1'000'000'000;

OffsetSample settled(int second, double offset_ns, double bound_ns = 20'000) {
  OffsetSample s;
  s.t_ns = second * kSecond;
  s.offset_ns = offset_ns;
  s.bound_ns = bound_ns;
  s.settled = true;
  s.drift_ppm = 0;
  s.drift_bound_ppm = 0.5;
  return s;
}
OffsetSample broken(int second, double offset_ns, double bound_ns) {
  OffsetSample s;
  s.t_ns = second * kSecond;
  s.offset_ns = offset_ns;
  s.bound_ns = bound_ns;
  s.broken = true;
  return s;
}
}  // namespace

TEST_CASE("no break: no shift") {
  PairHistory h(120);
  for (int i = 0; i < 30; ++i) h.add(settled(i, 1'000 * (i % 3)));
  CHECK_FALSE(h.change(Config{}).has_value());
}

TEST_CASE("a jump after which the window breaks is a step, with its size and time") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 2'000));
  for (int i = 10; i < 20; ++i) h.add(broken(i, 5'002'000, 40'000));
  auto s = h.shift(Config{});
  REQUIRE(s);
  CHECK(s->kind == Cause::clock_step);
  CHECK(s->value == doctest::Approx(5'000'000));
  CHECK(s->tolerance == doctest::Approx(60'000));
  CHECK(s->at_ns == 10 * kSecond);
}

TEST_CASE("a step between two settled estimates is found without a break") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
  for (int i = 10; i < 12; ++i) h.add(settled(i, -3'000'000));
  auto s = h.shift(Config{});
  REQUIRE(s);
  CHECK(s->kind == Cause::clock_step);
  CHECK(s->value == doctest::Approx(-3'000'000));
}

TEST_CASE("a steady move across a break is a drift, with its slope") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
  // 50 ppm from second 10: 50 µs per second.
  for (int i = 10; i < 40; ++i) h.add(broken(i, 50'000.0 * (i - 9), 20'000));
  auto s = h.shift(Config{});
  REQUIRE(s);
  CHECK(s->kind == Cause::clock_drift);
  CHECK(s->value == doctest::Approx(50).epsilon(0.05));
}

TEST_CASE("a move the bounds explain is no shift") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
  for (int i = 10; i < 15; ++i) h.add(broken(i, 30'000, 40'000));
  CHECK_FALSE(h.change(Config{}).has_value());
}

TEST_CASE("a break without a settled estimate before it tells nothing") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(broken(i, 5'000'000, 20'000));
  CHECK_FALSE(h.change(Config{}).has_value());
}

TEST_CASE("the history is bounded and ordered") {
  PairHistory h(5);
  for (int i = 0; i < 50; ++i) h.add(settled(i, 0));
  h.add(settled(3, 0));  // out of order: ignored
  CHECK(h.samples().size() == 5);
  CHECK(h.samples().back().t_ns == 49 * kSecond);
}

TEST_CASE("the book keeps one orientation per pair, bounded, and forgets stale pairs") {
  Config c;
  c.max_pairs = 2;
  HistoryBook book(c);
  book.add("a", "b", settled(1, 1'000));
  book.add("b", "a", settled(2, -1'000));  // the same pair, reversed
  book.add("a", "c", settled(1, 0));
  book.add("b", "c", settled(1, 0));  // beyond max_pairs
  CHECK(book.pairs() == 2);
  CHECK(book.pairs_not_remembered() == 1);
  auto ab = book.find("a", "b");
  REQUIRE(ab);
  CHECK(ab->samples().size() == 2);
  CHECK(*ab->samples().back().offset_ns == doctest::Approx(1'000));
  auto ba = book.find("b", "a");
  REQUIRE(ba);
  CHECK(*ba->samples().back().offset_ns == doctest::Approx(-1'000));
  book.forget_stale(2 * kSecond + c.forget_after_ns + 1);
  CHECK(book.pairs() == 0);
}

TEST_CASE("a drift's slope is measured after the break, not diluted by the quiet seconds before it") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
  for (int i = 10; i < 15; ++i) {
    OffsetSample quiet;  // unsettled, no offset: the anchor stays at second 9
    quiet.t_ns = i * kSecond;
    h.add(quiet);
  }
  // 50 ppm from second 15.
  h.add(broken(15, 50'000, 20'000));
  CHECK_FALSE(h.change(Config{}).has_value());  // one estimate after the break: no slope yet
  for (int i = 16; i < 25; ++i) h.add(broken(i, 50'000.0 * (i - 14), 20'000));
  auto s = h.shift(Config{});
  REQUIRE(s);
  CHECK(s->kind == Cause::clock_drift);
  CHECK(s->value == doctest::Approx(50).epsilon(0.02));
}

TEST_CASE("a drift is named as soon as its slope clears the bounds over the time measured, not before") {
  auto history = [](double bound_ns, int seconds_after_break) {
    PairHistory h(120);
    for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
    // 20 ppm from second 10; the window breaks at second 12 (40 µs moved).
    for (int i = 12; i <= 12 + seconds_after_break; ++i) h.add(broken(i, 20'000.0 * (i - 10), bound_ns));
    return h.change(Config{});
  };
  SUBCASE("narrow bounds: one tick after the break") {
    auto s = history(2'000, 1);  // tolerance (2 + 2 µs) / 1 s = 4 ppm, + 5 ppm threshold
    REQUIRE(s);
    CHECK(s->kind == Cause::clock_drift);
    CHECK(s->value == doctest::Approx(20));
  }
  SUBCASE("wide bounds: not after one tick, named once the slope clears") {
    CHECK_FALSE(history(20'000, 1).has_value());  // 40 ppm + 5 ppm > 20 ppm
    CHECK_FALSE(history(20'000, 2).has_value());  // 20 ppm + 5 ppm > 20 ppm
    auto s = history(20'000, 3);                  // 13.3 ppm + 5 ppm < 20 ppm
    REQUIRE(s);
    CHECK(s->kind == Cause::clock_drift);
  }
}

TEST_CASE("a drift the estimator follows without a break: the settled offsets move steadily") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 0, 10'000));
  // 20 ppm from second 10, every estimate settled, consecutive ones 20 µs apart (no jump).
  for (int i = 10; i <= 12; ++i) h.add(settled(i, 20'000.0 * (i - 9), 10'000));
  auto s = h.shift(Config{});
  REQUIRE(s);  // 60 µs since second 9 > 10 + 10 µs + 5 ppm × 3 s, and the least diluted such span
  CHECK(s->kind == Cause::clock_drift);
  CHECK(s->value > 10);
  CHECK(s->value <= doctest::Approx(20));
  SUBCASE("offsets wandering within their bounds are no drift") {
    PairHistory q(120);
    for (int i = 0; i < 30; ++i) q.add(settled(i, (i % 2 ? 1 : -1) * 9'000.0, 10'000));
    CHECK_FALSE(q.change(Config{}).has_value());
  }
  SUBCASE("a standing offset (a clock wrong before the history began) is no drift") {
    PairHistory q(120);
    for (int i = 0; i < 30; ++i) q.add(settled(i, 3e6, 10'000));
    CHECK_FALSE(q.change(Config{}).has_value());
  }
}

TEST_CASE("a warm-up break before any settled estimate does not hide a later drift") {
  PairHistory h(120);
  OffsetSample quiet;  // the agent's first estimate: nothing yet
  quiet.t_ns = 0;
  h.add(quiet);
  OffsetSample warmup;  // then broken, with nothing settled before it: a break without an anchor
  warmup.t_ns = 1 * kSecond;
  warmup.broken = true;
  h.add(warmup);
  for (int i = 2; i < 10; ++i) h.add(settled(i, 0, 10'000));
  for (int i = 10; i <= 12; ++i) h.add(settled(i, 20'000.0 * (i - 9), 10'000));
  auto s = h.shift(Config{});
  REQUIRE(s);
  CHECK(s->kind == Cause::clock_drift);
}

TEST_CASE("without a change, the steady slope: every line through the newest unbroken intervals") {
  SUBCASE("a still pair: the shortest stretch whose half-width is at most the threshold") {
    PairHistory h(120);
    for (int i = 0; i < 30; ++i) h.add(settled(i, 1'000 * (i % 3)));
    auto s = h.shift(Config{});
    REQUIRE(s);
    CHECK(s->kind == Cause::none);
    CHECK(s->tolerance <= 5);
    CHECK(std::abs(s->value) <= s->tolerance);
    // (20 + 20 µs) / 8 s = 5 ppm: no longer stretch is needed (the offsets' spread narrows it a little).
    CHECK(s->at_ns >= 21 * kSecond);
    CHECK(s->at_ns < 29 * kSecond);
  }
  SUBCASE("a short history: the longest stretch, wider than the threshold") {
    PairHistory h(120);
    for (int i = 0; i < 3; ++i) h.add(settled(i, 0));
    auto s = h.steady(Config{});
    REQUIRE(s);
    CHECK(s->tolerance == doctest::Approx(20));  // (20 + 20 µs) / 2 s
    CHECK(s->at_ns == 0);
    PairHistory one(120);
    one.add(settled(0, 0));
    CHECK_FALSE(one.steady(Config{}).has_value());
  }
  SUBCASE("the stretch ends where no line passes through an interval and the newer ones") {
    // 44 µs up at second 20: within the bounds of consecutive estimates (no break, no drift), but no
    // line passes through the 20 quiet seconds and the 5 after it. Seconds 19 to 24 admit slopes
    // from 4 ppm (up 4 µs from 19 to 20) to 10 ppm (20 to 24): 7 ± 3 ppm, tight, and not still.
    PairHistory h(120);
    for (int i = 0; i < 20; ++i) h.add(settled(i, 0));
    for (int i = 20; i < 25; ++i) h.add(settled(i, 44'000));
    CHECK_FALSE(h.change(Config{}).has_value());
    auto s = h.steady(Config{});
    REQUIRE(s);
    CHECK(s->at_ns == 19 * kSecond);
    CHECK(s->value == doctest::Approx(7));
    CHECK(s->tolerance == doctest::Approx(3));
  }
  SUBCASE("a broken newest estimate has no steady slope") {
    PairHistory h(120);
    for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
    h.add(broken(10, 0, 40'000));
    CHECK_FALSE(h.steady(Config{}).has_value());
  }
}

TEST_CASE("a drift's slope after the break: every line through the estimates since, when narrower than the ends") {
  PairHistory h(120);
  for (int i = 0; i < 10; ++i) h.add(settled(i, 0));
  // 20 ppm; the break's first tick holds a wide hull (± 60 µs), the next ones ± 10 µs.
  h.add(broken(10, 20'000, 60'000));
  for (int i = 11; i <= 13; ++i) h.add(broken(i, 20'000.0 * (i - 9), 10'000));
  // From the ends alone: (60 + 10 µs) / 3 s = 23.3 ppm, and 20 ppm does not clear 23.3 + 5. Seconds 11
  // and 13 alone: (10 + 10 µs) / 2 s = 10 ppm.
  auto s = h.change(Config{});
  REQUIRE(s);
  CHECK(s->kind == Cause::clock_drift);
  CHECK(s->tolerance == doctest::Approx(10));
  CHECK(s->value == doctest::Approx(20));
  CHECK(s->at_ns == 10 * kSecond);
}
