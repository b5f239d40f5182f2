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

namespace {
// A settled estimate every 250 ms with its floors: `forward` src → dst, `reverse` back (ns).
OffsetSample floors(int tick, double forward_ns, double reverse_ns) {
  OffsetSample s = settled(0, 0, 15'000);
  s.t_ns = tick * kSecond / 4;
  s.forward_min_span_ns = forward_ns;
  s.reverse_min_span_ns = reverse_ns;
  return s;
}
// Ten seconds of a still pair (floors 19 µs each way), then θ falling at 20 ppm for `ticks` ticks:
// the src → dst floor falls 5 µs a tick, the other stays (the older spans that hold it leave the
// window only later).
PairHistory still_then_falling(int ticks) {
  PairHistory h(480);
  for (int t = 0; t < 40; ++t) h.add(floors(t, 19'000, 19'000));
  for (int t = 40; t < 40 + ticks; ++t) h.add(floors(t, 19'000 - 5'000.0 * (t - 39), 19'000));
  return h;
}
}  // namespace

TEST_CASE("a floor that wanders within its own spread did not fall") {
  PairHistory h(480);
  // Ten seconds of a still pair: the least span each way wanders between 18.7 and 19.2 µs.
  for (int t = 0; t < 40; ++t) h.add(floors(t, 18'700 + 500 * (t % 5 == 0), 19'000 - 300 * (t % 7 == 0)));
  CHECK_FALSE(h.floor_fall(Config{}).has_value());
  SUBCASE("a new low within the margin and the wander is none either") {
    h.add(floors(40, 9'000, 19'000));  // 9.7 µs under the lowest: within 8 µs + 2 × 0.5 µs + 5 ppm × 0.25 s
    CHECK_FALSE(h.floor_fall(Config{}).has_value());
  }
}

TEST_CASE("a floor falling with the offset: moved within a few ticks, in its direction") {
  CHECK_FALSE(still_then_falling(2).floor_fall(Config{}).has_value());  // 10 µs in 0.5 s: within 8 µs + 5 ppm × 0.5 s
  PairHistory h = still_then_falling(3);
  auto f = h.floor_fall(Config{});
  REQUIRE(f);
  CHECK(f->forward);
  CHECK(f->fall_ns == doctest::Approx(15'000));
  CHECK(f->allowed_ns == doctest::Approx(8'000 + 5 * 0.75 * 1'000));  // margin + 5 ppm over the 0.75 s gap
  CHECK(f->since_ns == 39 * kSecond / 4);
  SUBCASE("seen from the other end, the same fall is the reverse floor's") {
    HistoryBook book;
    for (const auto& s : h.samples()) book.add("b", "a", reversed(s));
    auto g = book.find("b", "a")->floor_fall(Config{});
    REQUIRE(g);
    CHECK_FALSE(g->forward);
    CHECK(g->fall_ns == doctest::Approx(15'000));
  }
}

TEST_CASE("a fall a drift under the threshold explains is none; one beyond it is a move") {
  PairHistory h(480);
  // 4 ppm for 20 s: 80 µs over the whole reference, never more than 8 µs beyond 5 ppm over a gap.
  for (int t = 0; t < 80; ++t) h.add(floors(t, 19'000 - 1'000.0 * t, 19'000));
  CHECK_FALSE(h.floor_fall(Config{}).has_value());
  PairHistory g(480);
  for (int t = 0; t < 80; ++t) g.add(floors(t, 19'000 - 2'000.0 * t, 19'000));  // 8 ppm: 3 ppm × 19.75 s > 8 µs
  auto f = g.floor_fall(Config{});
  REQUIRE(f);
  CHECK(f->since_ns == 0);  // the largest excess is over the whole reference: 3 ppm × 19.75 s
}

TEST_CASE("floors before the pair first settled (a window still filling) and beyond the reference are not compared") {
  PairHistory h(480);
  OffsetSample filling = floors(0, 40'000, 40'000);
  filling.settled = false;
  h.add(filling);
  for (int t = 1; t < 10; ++t) h.add(floors(t, 19'000, 19'000));
  CHECK_FALSE(h.floor_fall(Config{}).has_value());
  Config short_memory;
  short_memory.floor_reference_ns = kSecond;
  PairHistory g(480);
  g.add(floors(0, 50'000, 19'000));  // 30 µs above the later floor, 2.5 s before the newest (8 µs + 5 ppm: 20.5 µs)
  for (int t = 6; t < 11; ++t) g.add(floors(t, 20'000, 19'000));
  CHECK(g.floor_fall(Config{}).has_value());
  CHECK_FALSE(g.floor_fall(short_memory).has_value());
  SUBCASE("settled once, long ago, then unsettled for longer than the reference (a lopsided path): still compared") {
    PairHistory l(480);
    l.add(floors(0, 19'000, 1'019'000));
    for (int t = 1; t < 200; ++t) {
      OffsetSample s = floors(t, 19'000, 1'019'000);
      s.settled = false;
      l.add(s);
    }
    OffsetSample s = floors(200, 4'000, 1'019'000);
    s.settled = false;
    l.add(s);
    CHECK(l.floor_fall(Config{}).has_value());
  }
}

// floor_falling as the agent asks it: only of a floor that fell.
std::optional<FloorFall> falling(const PairHistory& h) {
  const auto fell = h.floor_fall(Config{});
  return fell ? h.floor_falling(*fell, Config{}) : std::nullopt;
}

TEST_CASE("floors of a window still filling are not compared: a settled pair's least span falls as spans come") {
  // Seen in CI on a loaded machine: a fresh agent's still pair settled at once, then its floor fell
  // 16.7 µs over 0.91 s, a little every tick, while its window filled, and was named clock_drift.
  PairHistory h(480);
  for (int t = 0; t < 8; ++t) {
    OffsetSample s = floors(t, 40'000 - 3'000.0 * t, 40'000 - 2'000.0 * t);
    s.window_filling = true;
    h.add(s);
    CHECK_FALSE(h.floor_fall(Config{}).has_value());
  }
  SUBCASE("once full, only the full windows are compared: a floor standing on the filled window's least did not fall") {
    for (int t = 8; t < 12; ++t) h.add(floors(t, 19'000, 26'000));
    CHECK_FALSE(h.floor_fall(Config{}).has_value());
  }
  SUBCASE("and a full window's floor that falls every tick is a move again") {
    for (int t = 8; t < 12; ++t) h.add(floors(t, 19'000 - 5'000.0 * (t - 8), 26'000));
    REQUIRE(h.floor_fall(Config{}).has_value());
    CHECK(h.floor_fall(Config{})->since_ns == 8 * kSecond / 4);
    CHECK(falling(h).has_value());
  }
}

TEST_CASE("a floor that keeps falling every tick is an offset on the move; one that fell once and stands is not") {
  CHECK_FALSE(falling(still_then_falling(2)).has_value());  // two ticks, and not beyond the margin yet
  PairHistory h = still_then_falling(3);
  auto f = falling(h);
  REQUIRE(f);
  CHECK(f->forward);
  CHECK(f->since_ns == 39 * kSecond / 4);
  CHECK(f->fall_ns == doctest::Approx(15'000));
  CHECK(f->allowed_ns == doctest::Approx(5 * 0.75 * 1'000));
  SUBCASE("one tick in which it stood is allowed (its newest spans were all a little slow); two or a rise end it") {
    h.add(floors(43, 4'000, 19'000));
    REQUIRE(falling(h).has_value());
    CHECK(falling(h)->since_ns == 39 * kSecond / 4);
    PairHistory rose = h;
    rose.add(floors(44, 4'500, 19'000));
    CHECK(rose.floor_fall(Config{}).has_value());
    CHECK_FALSE(falling(rose).has_value());
    h.add(floors(44, 4'000, 19'000));
    CHECK(h.floor_fall(Config{}).has_value());
    CHECK_FALSE(falling(h).has_value());
  }
  SUBCASE("a step: the floor fell once by 30 µs, then stands however its least spans wander") {
    PairHistory g(480);
    for (int t = 0; t < 40; ++t) g.add(floors(t, 19'000, 19'000));
    for (int t = 40; t < 46; ++t) g.add(floors(t, -11'000 - 200.0 * (t - 40), 19'000));
    CHECK(g.floor_fall(Config{}).has_value());
    CHECK_FALSE(falling(g).has_value());
  }
}
