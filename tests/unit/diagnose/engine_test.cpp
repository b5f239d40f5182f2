#include <doctest/doctest.h>

#include "diagnose/engine.hpp"

using namespace skewscope::diagnose;

namespace {
constexpr std::int64_t kSecond = 1'000'000'000;

// A settled two-sided pair with offset θ = dst − src, and spans implied by a 20 µs one-way delay.
PairObservation pair(const std::string& src, const std::string& dst, double offset_ns = 0, double bound_ns = 20'000) {
  PairObservation p;
  p.src = src;
  p.dst = dst;
  p.has_estimate = true;
  p.two_sided = true;
  p.now.t_ns = 100 * kSecond;
  p.now.offset_ns = offset_ns;
  p.now.bound_ns = bound_ns;
  p.now.settled = true;
  p.now.drift_ppm = 0;
  p.now.drift_bound_ppm = 0.5;
  p.now.forward_min_span_ns = 20'000 + offset_ns;
  p.now.reverse_min_span_ns = 20'000 - offset_ns;
  p.spans = 1000;
  return p;
}
// The pair after a step of `step_ns` (of θ) seen at second 90.
PairObservation stepped(const std::string& src, const std::string& dst, double step_ns) {
  PairObservation p = pair(src, dst, step_ns, 40'000);
  p.now.settled = false;
  p.now.broken = true;
  p.shift = Shift{Cause::clock_step, step_ns, 60'000, 90 * kSecond, 0, step_ns};
  if (step_ns > 20'000) p.negative_spans = 400;  // θ above the delay: dst→src spans invert
  if (step_ns < -20'000) p.negative_spans = 400;
  return p;
}
// The pair after a drift of `ppm` (of θ) its history measured since a break at second 90, ± `tol_ppm`;
// `inverted` spans in its window (a drift past the delay inverts one direction).
PairObservation drifted(const std::string& src, const std::string& dst, double ppm, double tol_ppm = 2,
                        std::uint64_t inverted = 0) {
  PairObservation p = pair(src, dst, ppm * 1'000 * 3, 40'000);
  p.now.broken = true;
  p.now.settled = false;
  p.now.drift_ppm.reset();
  p.negative_spans = inverted;
  p.shift = Shift{Cause::clock_drift, ppm, tol_ppm, 90 * kSecond, 0, ppm * 3'000};
  return p;
}
HostClock synced(const std::string& host, double bound_ns = 1'000) {
  HostClock c;
  c.host = host;
  c.readings = true;
  c.status = "synchronized";
  c.error_bound_ns = bound_ns;
  return c;
}
const PairDiagnosis& find(const DiagnosisReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.pairs)
    if (p.src == src && p.dst == dst) return p;
  FAIL("pair not found");
  return r.pairs.front();
}
const HostDiagnosis& host(const DiagnosisReport& r, const std::string& name) {
  for (const auto& h : r.hosts)
    if (h.host == name) return h;
  FAIL("host not found");
  return r.hosts.front();
}
}  // namespace

TEST_CASE("every cause has a fixed label and parses back") {
  for (std::size_t i = 0; i < kCauseCount; ++i) {
    auto c = static_cast<Cause>(i);
    CHECK(cause_from_name(cause_name(c)) == c);
  }
  CHECK_FALSE(cause_from_name("bogus").has_value());
}

TEST_CASE("fault-free: none, no incident, nobody blamed") {
  auto r = diagnose({pair("pre", "infer", 500), pair("infer", "post", -300), pair("pre", "post", 200)},
                    {synced("pre"), synced("infer"), synced("post")}, Config{});
  CHECK(r.incidents == 0);
  for (const auto& p : r.pairs) CHECK(p.cause == Cause::none);
  for (const auto& h : r.hosts) {
    CHECK(h.cause == Cause::none);
    CHECK_FALSE(h.culprit);
  }
}

TEST_CASE("a step on one of three hosts: clock_step, that host named, the third pair as evidence") {
  // infer's clock stepped +5 ms: θ(pre→infer) +5 ms, θ(infer→post) −5 ms, pre→post unchanged.
  auto r = diagnose({stepped("pre", "infer", 5e6), stepped("infer", "post", -5e6), pair("pre", "post", 1'000)}, {},
                    Config{});
  CHECK(r.incidents == 2);
  const auto& a = find(r, "pre", "infer");
  CHECK(a.cause == Cause::clock_step);
  REQUIRE(a.culprit);
  CHECK(*a.culprit == "infer");
  CHECK(*a.amount == doctest::Approx(5e6));
  CHECK(a.since_ns == 90 * kSecond);
  CHECK(a.confidence > 0.9);
  CHECK(*find(r, "infer", "post").culprit == "infer");
  CHECK(find(r, "pre", "post").cause == Cause::none);
  const auto& h = host(r, "infer");
  CHECK(h.culprit);
  CHECK(h.cause == Cause::clock_step);
  CHECK(*h.amount == doctest::Approx(5e6));
  CHECK(h.pairs.size() == 2);
  CHECK_FALSE(host(r, "pre").culprit);
  CHECK(host(r, "pre").cause == Cause::none);
}

TEST_CASE("a step on one of four hosts: named whatever the pairs' orientation") {
  // d stepped −2 ms.
  auto r = diagnose({stepped("a", "d", -2e6), stepped("d", "b", 2e6), stepped("c", "d", -2e6), pair("a", "b"),
                     pair("b", "c"), pair("a", "c")},
                    {}, Config{});
  CHECK(r.incidents == 3);
  for (const auto& p : r.pairs)
    if (p.cause == Cause::clock_step) {
      REQUIRE(p.culprit);
      CHECK(*p.culprit == "d");
    }
  CHECK(*host(r, "d").amount == doctest::Approx(-2e6));
}

TEST_CASE("two hosts: the step is found, the culprit is undetermined and says why") {
  auto r = diagnose({stepped("a", "b", 5e6)}, {}, Config{});
  const auto& p = find(r, "a", "b");
  CHECK(p.cause == Cause::clock_step);
  CHECK_FALSE(p.culprit);
  CHECK(p.culprit_note.find("two hosts") != std::string::npos);
  CHECK(host(r, "a").cause == Cause::undetermined);
  CHECK(host(r, "b").cause == Cause::undetermined);
  CHECK_FALSE(host(r, "a").culprit);
}

TEST_CASE("steps on two hosts at once: no single culprit is claimed") {
  // a +5 ms and b −3 ms: every pair moved, no host leaves the others consistent.
  auto r = diagnose({stepped("a", "b", -8e6), stepped("a", "c", -5e6), stepped("b", "c", 3e6)}, {}, Config{});
  for (const auto& p : r.pairs) {
    CHECK(p.cause == Cause::clock_step);
    CHECK_FALSE(p.culprit);
  }
}

TEST_CASE("a pair without evidence among the others leaves the culprit undetermined") {
  // Three hosts, but the pair among the others (pre→post) has no two-sided estimate.
  PairObservation one_way = pair("pre", "post");
  one_way.two_sided = false;
  one_way.now.offset_ns.reset();
  one_way.now.bound_ns.reset();
  one_way.now.settled = false;
  auto r = diagnose({stepped("pre", "infer", 5e6), stepped("infer", "post", -5e6), one_way}, {}, Config{});
  CHECK_FALSE(find(r, "pre", "infer").culprit);
  CHECK(find(r, "pre", "post").cause == Cause::undetermined);
  CHECK_FALSE(find(r, "pre", "post").incident());
}

TEST_CASE("a drift: clock_drift with its slope and the drifting host") {
  auto drifting = [](const std::string& s, const std::string& d, double ppm) {
    PairObservation p = pair(s, d, ppm * 1'000 * 10);
    p.now.drift_ppm = ppm;
    p.now.drift_bound_ppm = 1;
    return p;
  };
  auto r = diagnose({drifting("a", "b", 40), drifting("b", "c", -40), pair("a", "c")}, {}, Config{});
  const auto& p = find(r, "a", "b");
  CHECK(p.cause == Cause::clock_drift);
  CHECK(*p.amount == doctest::Approx(40));
  REQUIRE(p.culprit);
  CHECK(*p.culprit == "b");
  CHECK(host(r, "b").cause == Cause::clock_drift);
  SUBCASE("a slope below the threshold is none") {
    auto q = diagnose({drifting("a", "b", 3)}, {}, Config{});
    CHECK(q.pairs.front().cause == Cause::none);
  }
}

TEST_CASE("a slow drift: one of the culprit's pairs has not cleared its tolerance yet (corpus incidents 14, 26)") {
  // d drifts −20 ppm. a→d and b→d broke first: their slopes clear ± 2 ppm + 5; c→d has not
  // broken yet, and the estimator's own slope does not clear its bound (−14 ± 12 + 5).
  // A pair whose history shows no shift yet: only the estimator's own slope, not pinned enough.
  auto unclear = [](const std::string& s, const std::string& d, double ppm, double bound_ppm) {
    PairObservation p = pair(s, d, ppm * 1'000 * 3, 40'000);
    p.now.broken = true;
    p.now.settled = false;
    p.now.drift_ppm = ppm;
    p.now.drift_bound_ppm = bound_ppm;
    return p;
  };
  auto none = [](const std::string& s, const std::string& d) {
    PairObservation p = pair(s, d);
    p.now.drift_bound_ppm = 3;
    return p;
  };
  SUBCASE("four hosts: d is the one host that fits, named on every pair it is in") {
    auto r = diagnose({drifted("a", "d", -20, 2), drifted("b", "d", -19, 2), unclear("c", "d", -14, 12), none("a", "b"),
                       none("a", "c"), none("b", "c")},
                      {}, Config{});
    CHECK(find(r, "a", "d").cause == Cause::clock_drift);
    CHECK(find(r, "c", "d").cause == Cause::undetermined);  // its own slope does not clear: no cause yet
    REQUIRE(find(r, "a", "d").culprit);
    CHECK(*find(r, "a", "d").culprit == "d");
    REQUIRE(find(r, "b", "d").culprit);
    CHECK(host(r, "d").culprit);
    CHECK(host(r, "d").cause == Cause::clock_drift);
    CHECK(*host(r, "d").amount == doctest::Approx(-19.5));  // over the pairs that cleared
  }
  SUBCASE("the late pair disagrees with the others beyond both tolerances: nobody fits") {
    auto r = diagnose({drifted("a", "d", -20, 2), drifted("b", "d", -19, 2), unclear("c", "d", 10, 3), none("a", "b"),
                       none("a", "c"), none("b", "c")},
                      {}, Config{});
    CHECK_FALSE(find(r, "a", "d").culprit);
  }
  SUBCASE("three hosts, the late pair broken: it moved, so a, outside it, does not fit, and d is named") {
    auto r = diagnose({drifted("a", "d", -20, 12), unclear("b", "d", -14, 12), none("a", "b")}, {}, Config{});
    REQUIRE(find(r, "a", "d").culprit);
    CHECK(*find(r, "a", "d").culprit == "d");
    CHECK(find(r, "a", "d").culprit_candidates.empty());
  }
  SUBCASE(
      "three hosts, the late pair only inverted, its tolerance wide enough to fit the other end too: undetermined") {
    // d fits, but so does a: b→d is within its tolerance of 0, and a's own shifts (0 ± 8 ppm on
    // a→b, +20 ± 17 ppm on a→d) agree within their tolerances. Two hosts fit: none is named.
    PairObservation late = unclear("b", "d", -14, 12);
    late.now.broken = false;
    late.negative_spans = 12;
    auto r = diagnose({drifted("a", "d", -20, 12), late, none("a", "b")}, {}, Config{});
    CHECK_FALSE(find(r, "a", "d").culprit);
    // Not "no single host": one of the two, not yet which.
    CHECK(find(r, "a", "d").culprit_candidates == std::vector<std::string>{"a", "d"});
    CHECK_FALSE(host(r, "a").culprit);
    CHECK_FALSE(host(r, "d").culprit);
  }
  SUBCASE("a single fit or no fit names no candidates") {
    auto one = diagnose({drifted("a", "d", -20, 2), drifted("b", "d", -19, 2), unclear("c", "d", -14, 12),
                         none("a", "b"), none("a", "c"), none("b", "c")},
                        {}, Config{});
    CHECK(find(one, "a", "d").culprit_candidates.empty());
    auto nobody = diagnose({drifted("a", "d", -20, 2), drifted("b", "d", -19, 2), unclear("c", "d", 10, 3),
                            none("a", "b"), none("a", "c"), none("b", "c")},
                           {}, Config{});
    CHECK(find(nobody, "a", "d").culprit_candidates.empty());
  }
}

TEST_CASE("a drift found by the history across a break") {
  PairObservation p = pair("a", "b", 1e6, 50'000);
  p.now.broken = true;
  p.now.settled = false;
  p.now.drift_ppm.reset();
  p.shift = Shift{Cause::clock_drift, 50, 2, 80 * kSecond, 0, 1e6};
  auto r = diagnose({p}, {}, Config{});
  CHECK(r.pairs.front().cause == Cause::clock_drift);
  CHECK(*r.pairs.front().amount == doctest::Approx(50));
  CHECK(r.pairs.front().since_ns == 80 * kSecond);
}

TEST_CASE("losses in the window: capture_incomplete, whatever else the pair shows") {
  PairObservation p = stepped("a", "b", 5e6);
  p.capture_complete = false;
  auto r = diagnose({p, stepped("b", "c", -5e6), pair("a", "c")}, {}, Config{});
  const auto& d = find(r, "a", "b");
  CHECK(d.cause == Cause::capture_incomplete);
  CHECK_FALSE(d.culprit);
  // The lost pair is left out of the triangulation: b→c alone with a→c still names b.
  CHECK(*find(r, "b", "c").culprit == "b");
}

TEST_CASE("ptp_lost: named by the host's own source") {
  HostClock lost = synced("b");
  lost.ptp = true;
  lost.port_state = "LISTENING";
  lost.gm_present = false;
  lost.status = "disrupted";
  HostClock fine = synced("a");
  fine.ptp = true;
  fine.port_state = "SLAVE";
  fine.gm_present = true;
  auto r = diagnose({pair("a", "b", 3'000)}, {fine, lost}, Config{});
  const auto& d = r.pairs.front();
  CHECK(d.cause == Cause::ptp_lost);
  REQUIRE(d.culprit);
  CHECK(*d.culprit == "b");
  CHECK(host(r, "b").culprit);
  CHECK(host(r, "b").cause == Cause::ptp_lost);
  CHECK_FALSE(ptp_lost(fine));
  SUBCASE("a ptp4l that is master, or a host without ptp4l, lost nothing") {
    HostClock master = synced("m");
    master.port_state = "MASTER";  // ptp false: no client speaks for this clock
    CHECK_FALSE(ptp_lost(master));
  }
}

TEST_CASE("clock_source_disagrees: inversions deeper than the claimed bounds") {
  // b's clock was 200 µs ahead already when the history first saw its pairs settled.
  PairObservation p = pair("a", "b", 200'000);
  p.negative_spans = 50;
  p.unexplained_negative_spans = 50;
  p.first_settled = p.now;
  PairObservation q = pair("b", "c", -200'000);
  q.first_settled = q.now;
  auto r = diagnose({p, q, pair("a", "c")}, {synced("a"), synced("b"), synced("c")}, Config{});
  CHECK(find(r, "a", "b").cause == Cause::clock_source_disagrees);
  CHECK(find(r, "b", "c").cause == Cause::clock_source_disagrees);  // beyond the claim, no inversion needed
  CHECK(*find(r, "a", "b").culprit == "b");
  CHECK(find(r, "a", "c").cause == Cause::none);
  SUBCASE("inversions beyond the claim before any settled offset shows them: not yet a cause") {
    // A step a fraction of a second old: the spans invert, the estimator has not ticked since.
    PairObservation fresh = pair("a", "b", 0);
    fresh.now.settled = false;
    fresh.negative_spans = 50;
    fresh.unexplained_negative_spans = 50;
    auto q = diagnose({fresh}, {synced("a"), synced("b")}, Config{});
    CHECK(q.pairs.front().cause == Cause::undetermined);
    CHECK(q.pairs.front().culprit_note.find("claimed bounds") != std::string::npos);
  }
  SUBCASE("an excess that grew since the pair first settled (a drift in its first second): not standing") {
    p.first_settled->offset_ns = 0;
    auto g = diagnose({p}, {synced("a"), synced("b")}, Config{});
    CHECK(g.pairs.front().cause == Cause::undetermined);
    CHECK(g.pairs.front().culprit_note.find("standing") != std::string::npos);
  }
}

TEST_CASE("path_asymmetry: lopsided spans while the clocks agree") {
  PairObservation p = pair("a", "b", 0, 1'000'000);
  p.now.forward_min_span_ns = 2'000'000;  // 2 ms one way (netem), 20 µs back
  p.now.reverse_min_span_ns = 20'000;
  p.now.offset_ns = (2'000'000.0 - 20'000.0) / 2;  // the midpoint's bias
  p.now.bound_ns = (2'000'000.0 + 20'000.0) / 2;
  auto r = diagnose({p}, {synced("a", 5'000), synced("b", 5'000)}, Config{});
  const auto& d = r.pairs.front();
  CHECK(d.cause == Cause::path_asymmetry);
  CHECK_FALSE(d.culprit);
  CHECK(*d.amount == doctest::Approx(1'980'000));
  CHECK_FALSE(host(r, "a").culprit);
  CHECK(host(r, "a").cause == Cause::none);
  SUBCASE("without the clocks' bounds it cannot be told from an offset") {
    auto q = diagnose({p}, {}, Config{});
    CHECK(q.pairs.front().cause == Cause::none);
  }
  SUBCASE("the estimator calls the wide interval unsettled: asymmetry once the pair was settled before") {
    p.now.settled = false;
    p.history_settled = true;
    auto q = diagnose({p}, {synced("a", 5'000), synced("b", 5'000)}, Config{});
    CHECK(q.pairs.front().cause == Cause::path_asymmetry);
    SUBCASE("never settled (warm-up): no evidence yet") {
      p.history_settled = false;
      auto w = diagnose({p}, {synced("a", 5'000), synced("b", 5'000)}, Config{});
      CHECK(w.pairs.front().cause == Cause::undetermined);
    }
  }
}

TEST_CASE("inversions with a one-sided interval or unknown bounds: undetermined, never a made-up cause") {
  PairObservation p = pair("a", "b");
  p.two_sided = false;
  p.now.offset_ns.reset();
  p.now.bound_ns.reset();
  p.now.settled = false;
  p.negative_spans = 10;
  auto r = diagnose({p}, {}, Config{});
  CHECK(r.pairs.front().cause == Cause::undetermined);
  CHECK(r.pairs.front().culprit_note.find("one-sided") != std::string::npos);
  CHECK(r.incidents == 0);

  PairObservation q = pair("a", "b", 3'000);
  q.negative_spans = 10;
  HostClock absent;
  absent.host = "a";  // polled, nothing answered
  auto s = diagnose({q}, {absent, synced("b")}, Config{});
  CHECK(s.pairs.front().cause == Cause::undetermined);
  CHECK(s.pairs.front().culprit_note.find("unknown") != std::string::npos);
}

TEST_CASE("no estimate at all: undetermined") {
  PairObservation p;
  p.src = "a";
  p.dst = "b";
  auto r = diagnose({p}, {}, Config{});
  CHECK(r.pairs.front().cause == Cause::undetermined);
  CHECK(r.pairs.front().evidence.find("no two-sided offset") != std::string::npos);
}

TEST_CASE("combine over diagnoses gathered from several agents triangulates across them") {
  Config c;
  // One agent owns pre→infer only: two hosts, nobody can be named.
  std::vector<PairDiagnosis> pairs = {diagnose_pair(stepped("pre", "infer", 5e6), nullptr, nullptr, c)};
  auto alone = combine(pairs, {}, c);
  CHECK_FALSE(alone.pairs.front().culprit);
  // Another agent's pairs join: pre→post did not move, post→infer moved like pre→infer.
  pairs.push_back(diagnose_pair(pair("pre", "post"), nullptr, nullptr, c));
  pairs.push_back(diagnose_pair(stepped("post", "infer", 5e6), nullptr, nullptr, c));
  auto merged = combine(pairs, {}, c);
  CHECK(*find(merged, "pre", "infer").culprit == "infer");
  CHECK(*find(merged, "post", "infer").culprit == "infer");
}

TEST_CASE("format_ns") {
  CHECK(format_ns(5e6) == "+5.000 ms");
  CHECK(format_ns(-13'000) == "-13.0 µs");
  CHECK(format_ns(40) == "+40 ns");
}

TEST_CASE("a pair among the others counts as still only once its slope's tolerance is at most the threshold") {
  // A pair whose history shows a drift (a slope over the seconds since its break, ± tolerance), its
  // spans inverted.
  auto drifted = [](const std::string& s, const std::string& d, double ppm, double tol_ppm) {
    return ::drifted(s, d, ppm, tol_ppm, 100);
  };
  // A pair with no change: the estimator's own slope over its window (± 10 ppm, as in the lab),
  // and, when given, the steady slope of its history.
  auto still = [](const std::string& s, const std::string& d, double ppm, std::optional<Measure> steady = {}) {
    PairObservation p = pair(s, d);
    p.now.drift_ppm = ppm;
    p.now.drift_bound_ppm = 10;
    if (steady) p.shift = Shift{Cause::none, steady->value, steady->tolerance, 80 * kSecond, 0, 0};
    return p;
  };
  SUBCASE("one drift, the pair among the others tight: named, on the history's steady slope") {
    auto r = diagnose({drifted("a", "c", 20, 2), drifted("b", "c", 20, 2), still("a", "b", 0.5, Measure{0.3, 1.5})}, {},
                      Config{});
    REQUIRE(find(r, "a", "c").culprit);
    CHECK(*find(r, "a", "c").culprit == "c");
    CHECK(host(r, "c").culprit);
    REQUIRE(find(r, "a", "b").drift);
    CHECK(find(r, "a", "b").drift->tolerance == doctest::Approx(1.5));  // tighter than the estimator's 10 ppm
  }
  SUBCASE("one drift, the pair among the others only within its wide tolerance: pending, not named") {
    // a→b: 8 ± 10 ppm (+ 5) admits a 20 ppm drift of a or b as well as none.
    auto r = diagnose({drifted("a", "c", 20, 2), drifted("b", "c", 20, 2), still("a", "b", 8)}, {}, Config{});
    const auto& p = find(r, "a", "c");
    CHECK(p.cause == Cause::clock_drift);
    CHECK_FALSE(p.culprit);
    CHECK(p.culprit_candidates == std::vector<std::string>{"c"});  // culprit not yet known, not "no single host"
    CHECK(p.culprit_note.find("not yet known") != std::string::npos);
    CHECK_FALSE(host(r, "c").culprit);
    CHECK(find(r, "a", "b").culprit_candidates.empty());  // c is not in it
  }
  SUBCASE("a pair whose spans invert without a change in its history does not vouch, however tight") {
    PairObservation ab = still("a", "b", 8, Measure{0.3, 1.5});
    ab.negative_spans = 20;
    auto r = diagnose({drifted("a", "c", 20, 2), drifted("b", "c", 20, 2), ab}, {}, Config{});
    CHECK(find(r, "a", "b").drift->tolerance == doctest::Approx(10));  // the estimator's, not the steady slope
    CHECK_FALSE(find(r, "a", "c").culprit);
    CHECK(find(r, "a", "c").culprit_candidates == std::vector<std::string>{"c"});
    ab.now.drift_bound_ppm = 3;  // the estimator's own slope tight as well (its window bent)
    auto q = diagnose({drifted("a", "c", 20, 2), drifted("b", "c", 20, 2), ab}, {}, Config{});
    CHECK_FALSE(find(q, "a", "c").culprit);
    CHECK(find(q, "a", "c").culprit_candidates == std::vector<std::string>{"c"});
  }
  SUBCASE("two drifts, +100 ppm on a and +20 ppm on b: not named while b→c is wide, none once it is tight") {
    // θ = dst − src: a→b −80, a→c −100, b→c −20 ppm. a's own shifts, +80 and +100, agree within
    // their tolerances (8 + 5 each); b→c's own slope, −8 ± 10 ppm, is within 10 + 5 of 0.
    auto early = diagnose({drifted("a", "b", -80, 8), drifted("a", "c", -100, 8), still("b", "c", -8)}, {}, Config{});
    CHECK_FALSE(find(early, "a", "c").culprit);
    CHECK(find(early, "a", "c").culprit_candidates == std::vector<std::string>{"a"});
    CHECK_FALSE(host(early, "a").culprit);
    // b→c's history now pins its slope: −18 ± 2 ppm, beyond 2 + 5. No host fits.
    auto later = diagnose({drifted("a", "b", -80, 8), drifted("a", "c", -100, 8), still("b", "c", -8, Measure{-18, 2})},
                          {}, Config{});
    for (const auto& p : later.pairs) {
      CHECK_FALSE(p.culprit);
      CHECK(p.culprit_candidates.empty());
    }
    CHECK(find(later, "a", "c").culprit_note.find("no single host") != std::string::npos);
    // Or its own drift cleared (a break, then the slope since it).
    auto cleared =
        diagnose({drifted("a", "b", -80, 8), drifted("a", "c", -100, 8), drifted("b", "c", -20, 4)}, {}, Config{});
    CHECK_FALSE(find(cleared, "a", "c").culprit);
    CHECK(find(cleared, "a", "c").culprit_candidates.empty());
  }
  SUBCASE("steps are not held back: a step's tolerance does not shrink with time") {
    auto r =
        diagnose({stepped("pre", "infer", 5e6), stepped("infer", "post", -5e6), still("pre", "post", 8)}, {}, Config{});
    REQUIRE(find(r, "pre", "infer").culprit);
    CHECK(*find(r, "pre", "infer").culprit == "infer");
  }
}

TEST_CASE("a pair among the others whose window broke, with no slope yet, moved: no host outside it fits") {
  // d drifts −20 ppm (a→d, b→d cleared); c drifts too: a→c and b→c broke, no slope measured yet.
  auto broke = [](const std::string& s, const std::string& d) {
    PairObservation p = pair(s, d, 0, 40'000);
    p.now.broken = true;
    p.now.settled = false;
    p.now.drift_ppm.reset();
    return p;
  };
  PairObservation ab = pair("a", "b");
  ab.shift = Shift{Cause::none, 0.2, 1, 80 * kSecond, 0, 0};
  auto r =
      diagnose({drifted("a", "d", -20), drifted("b", "d", -20), broke("a", "c"), broke("b", "c"), ab, broke("c", "d")},
               {}, Config{});
  CHECK_FALSE(find(r, "a", "d").culprit);
  CHECK(find(r, "a", "d").culprit_candidates.empty());  // two clocks moved: no single host, not "not yet"
  CHECK_FALSE(find(r, "a", "c").drift);                 // the JSON shows no slope for it
  SUBCASE("only inverted, not broken: still for no host, consistent with all: d is a candidate") {
    auto inverted = [](const std::string& s, const std::string& d) {
      PairObservation p = pair(s, d, 0, 40'000);
      p.now.drift_ppm.reset();
      p.negative_spans = 5;
      return p;
    };
    auto q = diagnose({drifted("a", "d", -20), drifted("b", "d", -20), inverted("a", "c"), inverted("b", "c"), ab,
                       inverted("c", "d")},
                      {}, Config{});
    CHECK_FALSE(find(q, "a", "d").culprit);
    CHECK(find(q, "a", "d").culprit_candidates == std::vector<std::string>{"d"});
  }
}

TEST_CASE("a pair among the others whose floor fell moved: no host outside it fits, and no asymmetry") {
  // b drifts +100 ppm (its pairs cleared); c drifts −20 ppm, its pairs still within their ± 15 µs
  // intervals but a floor of each fell 12 µs in a second.
  auto fell = [](const std::string& s, const std::string& d) {
    PairObservation p = pair(s, d, 0, 15'000);
    p.now.drift_ppm = -8;
    p.now.drift_bound_ppm = 10;
    p.floor_fall = FloorFall{d == "c", 12'000, 7'000, 99 * kSecond};
    return p;
  };
  PairObservation ad = pair("a", "d");
  ad.shift = Shift{Cause::none, 0.2, 1, 80 * kSecond, 0, 0};
  auto r = diagnose(
      {drifted("a", "b", 100), drifted("b", "c", -100), drifted("b", "d", -100), fell("a", "c"), fell("c", "d"), ad},
      {}, Config{});
  CHECK_FALSE(find(r, "a", "b").culprit);
  CHECK(find(r, "a", "b").culprit_candidates.empty());  // two clocks moved: no single host, not "not yet"
  CHECK(find(r, "a", "c").evidence.find("least span a→c fell 12.0 µs in 1.00 s") != std::string::npos);
  SUBCASE("without the fall, c's pairs are too wide to tell: b is a candidate, not yet the culprit") {
    PairObservation ac = fell("a", "c"), cd = fell("c", "d");
    ac.floor_fall.reset();
    cd.floor_fall.reset();
    auto q =
        diagnose({drifted("a", "b", 100), drifted("b", "c", -100), drifted("b", "d", -100), ac, cd, ad}, {}, Config{});
    CHECK_FALSE(find(q, "a", "b").culprit);
    CHECK(find(q, "a", "b").culprit_candidates == std::vector<std::string>{"b"});
  }
  SUBCASE("a lopsided pair whose low floor is falling is an offset on the move, not the path") {
    PairObservation p = pair("a", "b", 0, 12'000);
    p.now.forward_min_span_ns = 2'000;  // a drift about to invert a→b: 2 µs left, 22 µs back
    p.now.reverse_min_span_ns = 22'000;
    p.now.offset_ns = -10'000;
    p.now.settled = false;
    p.history_settled = true;
    auto clocks = std::vector<HostClock>{synced("a", 1'000), synced("b", 1'000)};
    CHECK(diagnose({p}, clocks, Config{}).pairs.front().cause == Cause::path_asymmetry);
    p.floor_fall = FloorFall{true, 15'000, 3'000, 99 * kSecond};
    CHECK(diagnose({p}, clocks, Config{}).pairs.front().cause == Cause::undetermined);
  }
}

TEST_CASE(
    "a floor that keeps falling: clock_drift before its pace is measured, named on the host all of whose pairs moved") {
  // c drifts −20 ppm: a→c and b→c floors fell for a second, every tick, their intervals still wide.
  auto falling = [](const std::string& s, const std::string& d) {
    PairObservation p = pair(s, d, 0, 15'000);
    p.now.drift_ppm = -8;
    p.now.drift_bound_ppm = 10;
    p.floor_fall = FloorFall{true, 20'000, 8'000, 99 * kSecond};
    p.floor_falling = FloorFall{true, 15'000, 3'750, 99 * kSecond + kSecond / 4};
    return p;
  };
  PairObservation ab = pair("a", "b");
  ab.shift = Shift{Cause::none, 0.2, 1, 80 * kSecond, 0, 0};
  auto r = diagnose({falling("a", "c"), falling("b", "c"), ab}, {}, Config{});
  const auto& ac = find(r, "a", "c");
  CHECK(ac.cause == Cause::clock_drift);
  CHECK_FALSE(ac.amount);  // its pace is not measured yet: no made-up slope
  CHECK(*ac.since_ns == 99 * kSecond + kSecond / 4);
  CHECK(ac.evidence.find("least span a→c fell 15.0 µs over the last 0.75 s") != std::string::npos);
  CHECK(ac.evidence.find("least span", ac.evidence.find("least span") + 1) == std::string::npos);  // said once
  CHECK(ac.culprit == std::optional<std::string>("c"));
  CHECK(host(r, "c").culprit);
  CHECK_FALSE(host(r, "c").amount);
  CHECK(find(r, "a", "b").cause == Cause::none);
  SUBCASE("a step the history shows comes first") {
    PairObservation p = falling("a", "c");
    p.shift = Shift{Cause::clock_step, -30'000, 30'000, 99 * kSecond, 0, -30'000};
    CHECK(diagnose({p}, {}, Config{}).pairs.front().cause == Cause::clock_step);
  }
  SUBCASE("b→c has not fallen yet: a fits as well as c, neither is named") {
    PairObservation bc = pair("b", "c", 0, 15'000);
    bc.now.drift_ppm = -8;
    bc.now.drift_bound_ppm = 3;
    auto q = diagnose({falling("a", "c"), bc, ab}, {}, Config{});
    CHECK_FALSE(find(q, "a", "c").culprit);
    CHECK(find(q, "a", "c").culprit_candidates == std::vector<std::string>{"a", "c"});
  }
}
