#include <doctest/doctest.h>

#include "health/health_tracker.hpp"
#include "health/pair_window.hpp"
#include "health/pairing_window.hpp"
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

TEST_CASE("health is 1 while spans are clean, 0 while a negative one is in the window, unknown once it is empty") {
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
  CHECK_FALSE(tracker.report(0).health);  // no pair: no evidence
  CHECK(tracker.report(0).unknown_reason == UnknownReason::no_pairs);
  tracker.add(span(kSecond, 50));
  auto r = tracker.report(kSecond);
  CHECK(r.health == 1);
  CHECK(r.pairs.at(0).state == PairState::ok);
  CHECK(r.pairs.at(0).unknown_reason == UnknownReason::none);
  tracker.add(span(2 * kSecond, -1));
  r = tracker.report(3 * kSecond);
  CHECK(r.health == 0);
  CHECK(r.pairs.at(0).state == PairState::violated);
  CHECK(r.pairs.at(0).negative_span_ratio == doctest::Approx(0.5));
  r = tracker.report(40 * kSecond);
  CHECK(r.pairs.at(0).state == PairState::unknown);  // nothing in the window any more
  CHECK_FALSE(r.pairs.at(0).health);
  CHECK(r.pairs.at(0).unknown_reason == UnknownReason::no_spans);
  CHECK(r.pairs.at(0).negative_spans == 1);
  CHECK(*r.pairs.at(0).last_span_age_ns == 38 * kSecond);  // kept: how long the pair is silent
  CHECK_FALSE(r.health);                                   // its only pair is unknown
  CHECK(r.unknown_reason == UnknownReason::no_pairs);
}

TEST_CASE("state rule") {
  WindowTotals empty, clean{10, 0, 5, {}}, bad{10, 1, -5, {}};
  CHECK(decide_state(empty, false) == PairState::unknown);
  CHECK(decide_state(clean, false) == PairState::ok);
  CHECK(decide_state(clean, true) == PairState::at_risk);
  CHECK(decide_state(bad, true) == PairState::violated);
  CHECK(decide_state(empty, true) == PairState::unknown);            // no at_risk verdict without a span
  CHECK(decide_state(clean, true, {}, true) == PairState::unknown);  // below the pairing floor
  CHECK(decide_state(bad, false, {}, true) == PairState::violated);  // seen stays certain
}

TEST_CASE("health rule: 1 needs a span in the window; a violation seen stays 0 whatever hides others") {
  WindowTotals empty, clean{10, 0, 5, {}}, bad{10, 1, -5, {}};
  const CaptureCoverage lossy{true, false}, down{false, true};
  CHECK_FALSE(decide_health(empty));
  CHECK(decide_unknown_reason(empty) == UnknownReason::no_spans);
  CHECK(decide_health(clean) == 1);
  CHECK(decide_health(bad) == 0);
  CHECK_FALSE(decide_health(clean, lossy));
  CHECK(decide_unknown_reason(clean, lossy) == UnknownReason::halves_lost);
  CHECK(decide_health(bad, lossy) == 0);
  CHECK_FALSE(decide_health(clean, {}, true));
  CHECK(decide_unknown_reason(clean, {}, true) == UnknownReason::halves_unpaired);
  CHECK(decide_health(bad, {}, true) == 0);
  CHECK_FALSE(decide_health(bad, down));
  CHECK(decide_unknown_reason(bad, down) == UnknownReason::capture_down);
}

TEST_CASE("overall health: 1 only with a pair at 1 and nothing that could hide a violation") {
  auto pair = [](std::optional<int> health, UnknownReason why) {
    PairReport p;
    p.health = health;
    p.unknown_reason = why;
    return p;
  };
  HealthReport r;
  decide_overall(r);
  CHECK_FALSE(r.health);
  CHECK(r.unknown_reason == UnknownReason::no_pairs);
  r.pairs = {pair(std::nullopt, UnknownReason::no_spans)};
  decide_overall(r);
  CHECK_FALSE(r.health);  // every pair silent
  r.pairs.push_back(pair(1, UnknownReason::none));
  decide_overall(r);
  CHECK(r.health == 1);  // a silent pair besides a healthy one hides nothing
  r.pairing = {DomainPairing{3, 0, 1000, true}};
  decide_overall(r);
  CHECK_FALSE(r.health);
  CHECK(r.unknown_reason == UnknownReason::halves_unpaired);
  r.pairs.push_back(pair(0, UnknownReason::none));
  decide_overall(r);
  CHECK(r.health == 0);
  r.capture_up = false;
  decide_overall(r);
  CHECK_FALSE(r.health);
  CHECK(r.unknown_reason == UnknownReason::capture_down);
}

TEST_CASE("pairing window: per domain over the window, the floor only over enough halves") {
  PairingWindow w(10 * kSecond, kSecond, PairingFloor{0.9, 100});
  for (int i = 0; i < 50; ++i) w.add_unpaired(1, kSecond);  // too few to judge
  auto r = w.report(kSecond);
  REQUIRE(r.size() == 1);
  CHECK(r[0].domain == 1);
  CHECK(r[0].unpaired_halves == 50);
  CHECK(r[0].ratio() == doctest::Approx(0.0));
  CHECK_FALSE(r[0].below_floor);
  for (int i = 0; i < 50; ++i) w.add_unpaired(1, 2 * kSecond);
  for (int i = 0; i < 950; ++i) w.add_paired(2, 2 * kSecond);
  for (int i = 0; i < 50; ++i) w.add_unpaired(2, 2 * kSecond);
  r = w.report(2 * kSecond);
  REQUIRE(r.size() == 2);
  CHECK(r[0].below_floor);  // 0 of 100
  CHECK(r[1].ratio() == doctest::Approx(0.95));
  CHECK_FALSE(r[1].below_floor);
  r = w.report(11 * kSecond);  // the first second has left the window: 50 left, too few
  REQUIRE(r.size() == 2);
  CHECK(r[0].unpaired_halves == 50);
  CHECK_FALSE(r[0].below_floor);
  CHECK(w.report(20 * kSecond).empty());
}

TEST_CASE("a domain below the pairing floor makes its pairs unknown, not the others'") {
  HealthTracker tracker(30 * kSecond);
  Span s;
  s.src = 1;
  s.dst = 2;
  s.capture_ns = kSecond;
  s.recv_ns = 10;
  tracker.add(s);
  s.src = 3;
  s.dst = 4;
  tracker.add(s);
  auto r = tracker.report(kSecond, {}, {DomainPairing{2, 10, 990, true}});
  REQUIRE(r.pairs.size() == 2);
  CHECK_FALSE(r.pairs[0].health);
  CHECK(r.pairs[0].unknown_reason == UnknownReason::halves_unpaired);
  CHECK(r.pairs[1].health == 1);
  CHECK_FALSE(r.health);
  CHECK(r.unknown_reason == UnknownReason::halves_unpaired);
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

TEST_CASE("a span standing for a run of messages counts as that many spans, everywhere") {
  // One tracker given a run of 5 as one span, one given the 5 spans one by one: the same report.
  HealthTracker runs(30 * kSecond), singles(30 * kSecond);
  auto span = [](std::int64_t t, std::int64_t value, std::uint32_t messages) {
    Span s;
    s.src = 1;
    s.dst = 2;
    s.transport = Transport::zmtp;
    s.capture_ns = t;
    s.recv_ns = value;
    s.messages = messages;
    return s;
  };
  runs.add(span(kSecond, 40, 3));
  runs.add(span(kSecond + 1, -7, 5), std::int64_t{2});
  for (int i = 0; i < 3; ++i) singles.add(span(kSecond, 40, 1));
  for (int i = 0; i < 5; ++i) singles.add(span(kSecond + 1, -7, 1), std::int64_t{2});
  const PairReport a = runs.report(2 * kSecond).pairs.at(0), b = singles.report(2 * kSecond).pairs.at(0);
  CHECK(a.spans == 8);
  CHECK(a.negative_spans == 5);
  CHECK(a.unexplained_negative_spans == 5);
  CHECK(a.window.spans == 8);
  CHECK(a.window.negative_spans == 5);
  CHECK(a.negative_span_ratio == doctest::Approx(5.0 / 8));
  CHECK(a.histograms.duration.count == 8);
  CHECK(a.histograms.negative_magnitude.count == 5);
  CHECK(a.histograms.duration.sum_seconds == doctest::Approx(b.histograms.duration.sum_seconds));
  CHECK(a.histograms.duration.in_bucket == b.histograms.duration.in_bucket);
  CHECK(a.histograms.negative_magnitude.in_bucket == b.histograms.negative_magnitude.in_bucket);
  CHECK(a.spans == b.spans);
  CHECK(a.window.min_span_ns == b.window.min_span_ns);
}

TEST_CASE("pairing window: a batch of spans counts as each span's two ends one by one") {
  // Runs of one pair within a bucket, pairs alternating, buckets crossed mid-run, a negative time.
  std::vector<Span> spans;
  auto span = [](DomainId src, DomainId dst, std::int64_t at_ns) {
    Span s;
    s.src = src;
    s.dst = dst;
    s.capture_ns = at_ns;
    return s;
  };
  for (int i = 0; i < 40; ++i) spans.push_back(span(1, 2, 9 * kSecond / 10 + i * kSecond / 20));
  for (int i = 0; i < 10; ++i) spans.push_back(span(i % 2 ? 2 : 3, 1, 3 * kSecond + i));
  spans.push_back(span(2, 1, -1));
  spans.push_back(span(2, 1, 0));
  spans.push_back(span(2, 1, kSecond - 1));
  spans.push_back(span(2, 1, kSecond));
  PairingWindow batch(10 * kSecond, kSecond), one(10 * kSecond, kSecond);
  batch.add_paired(spans);
  for (const Span& s : spans) {
    one.add_paired(s.src, s.capture_ns);
    one.add_paired(s.dst, s.capture_ns);
  }
  for (std::int64_t now : {std::int64_t{0}, 2 * kSecond, 4 * kSecond, 11 * kSecond, 12 * kSecond}) {
    const auto a = batch.report(now), b = one.report(now);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CAPTURE(now);
      CHECK(a[i].domain == b[i].domain);
      CHECK(a[i].paired_halves == b[i].paired_halves);
    }
  }
  CHECK(batch.report(4 * kSecond).size() == 3);
}

TEST_CASE("pairing window: domains that alternate half by half are counted as one by one, across buckets and reuse") {
  // Three buckets of 1 s; three domains taking turns (the two ends of request/response
  // traffic, and a third), times moving on by 0.37 s every few halves so that ring slots are
  // reused while recently found buckets are remembered.
  constexpr std::int64_t kBuckets = 3;
  PairingWindow w(kBuckets * kSecond, kSecond, PairingFloor{0.9, 1});
  struct Event {
    DomainId domain;
    std::int64_t at_ns;
    bool paired;
  };
  std::vector<Event> events;
  const DomainId turns[] = {1, 2, 1, 2, 3, 2};
  std::int64_t t = kSecond / 2;
  for (int i = 0; i < 600; ++i) {
    if (i % 4 == 0) t += 370'000'000;
    const Event e{turns[i % 6], t, i % 5 != 0};
    events.push_back(e);
    if (e.paired)
      w.add_paired(e.domain, e.at_ns);
    else
      w.add_unpaired(e.domain, e.at_ns);
    if (i % 50 != 49) continue;
    // Against the events themselves: each in the bucket of its second.
    const std::int64_t newest = t / kSecond;
    for (const DomainPairing& d : w.report(t)) {
      std::uint64_t paired = 0, unpaired = 0;
      for (const Event& x : events)
        if (x.domain == d.domain && x.at_ns / kSecond > newest - kBuckets) ++(x.paired ? paired : unpaired);
      CHECK(d.paired_halves == paired);
      CHECK(d.unpaired_halves == unpaired);
    }
  }
}

TEST_CASE("pairing window: a late half after its bucket's slot was reused lands in the newer bucket") {
  PairingWindow w(3 * kSecond, kSecond, PairingFloor{0.9, 1});
  w.add_paired(1, kSecond / 2);                // bucket 0, slot 0
  w.add_paired(2, kSecond / 2);                // another domain between: both remembered
  w.add_paired(1, 3 * kSecond + kSecond / 2);  // bucket 3 takes slot 0
  w.add_unpaired(1, kSecond / 2 + 1);          // late, for bucket 0: counted in bucket 3
  const auto r = w.report(3 * kSecond + kSecond / 2);
  REQUIRE(r.size() == 1);  // domain 2's bucket 0 has left the window
  CHECK(r[0].domain == 1);
  CHECK(r[0].paired_halves == 1);
  CHECK(r[0].unpaired_halves == 1);
}
