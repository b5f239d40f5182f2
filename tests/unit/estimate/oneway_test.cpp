#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "estimate/json.hpp"
#include "estimate/whatif.hpp"
#include "synth.hpp"

using namespace skewscope::estimate;
using synth::Delay;
using synth::DelayKind;
using synth::Scenario;

namespace {

std::string name(skewscope::DomainId d) { return d == 1 ? "push" : "pull"; }

// A PUSH/PULL hop: data one way at 200/s, and only the three handshake messages the other way,
// in the first 10 ms. Both clocks agree (θ = 0).
std::vector<skewscope::Span> push_pull(double seconds) {
  Scenario sc;
  sc.ab = sc.ba = Delay{DelayKind::exponential, 20'000, 30'000};
  sc.rate_hz_ba = 0;
  auto spans = synth::generate(sc, 0, seconds);
  for (int i = 0; i < 3; ++i) {
    const std::int64_t send = 2'000'000 + i * 3'000'000;
    spans.push_back({2, 1, skewscope::Transport::tcp, send, send + 25'000, send + 25'000, 0});
  }
  std::stable_sort(spans.begin(), spans.end(), [](auto& x, auto& y) { return x.capture_ns < y.capture_ns; });
  return spans;
}

}  // namespace

TEST_CASE("one-way hop: the stale reverse sample never turns the widening interval into an offset") {
  Estimator est;  // default: 200 ppm drift allowance, 30 s window
  int shown = 0, unsettled = 0, one_sided = 0;
  double widest_unsettled_ns = 0, largest_hidden_midpoint_ns = 0;
  synth::drive(est, push_pull(40), 0, 40, 1.0, [&](std::int64_t now) {
    CAPTURE(now);
    const auto e = est.estimate(1, 2);
    REQUIRE(e);
    if (e->lower_ns) CHECK(*e->lower_ns <= 0);  // the truth is always inside what is known
    REQUIRE(e->upper_ns);
    CHECK(*e->upper_ns >= 0);
    const ShownOffset s = shown_offset(&*e);
    const auto j = to_json(*e, name);
    switch (s.missing) {
      case OffsetMissing::none:
        ++shown;
        REQUIRE(s.bound_ns);
        CHECK(std::fabs(*s.offset_ns) <= *s.bound_ns);
        CHECK(*s.bound_ns <= est.config().at_risk_max_bound_ratio * *e->dt_min_ns);
        CHECK(j["offset_bound_seconds"].is_number());
        break;
      case OffsetMissing::unsettled:
        ++unsettled;
        widest_unsettled_ns = std::max(widest_unsettled_ns, *e->bound_ns);
        largest_hidden_midpoint_ns = std::max(largest_hidden_midpoint_ns, std::fabs(*e->offset_ns));
        CHECK(j["offset_seconds"].is_null());
        CHECK(j["offset_bound_seconds"].is_null());
        CHECK(j["offset_missing"] == "unsettled");
        CHECK(j["risk_ratio"].is_null());  // derived from the midpoint: left out with it
        CHECK(j["inversion_margin_seconds"]["forward"].is_null());
        CHECK_FALSE(e->at_risk);
        CHECK(j["at_risk"].is_null());
        CHECK(j["at_risk_basis"] == "not_assessed");
        break;
      case OffsetMissing::one_sided:
        ++one_sided;
        CHECK(s.missing_bound == MissingBound::lower);
        CHECK(j["offset_missing"] == "one_sided");
        CHECK(j["offset_missing_bound"] == "lower");
        CHECK(j["offset_lower_bound_seconds"].is_null());
        CHECK(j["at_risk"].is_null());
        break;
      default: FAIL("unexpected reason " << offset_missing_name(s.missing));
    }
  });
  // The symptom: the raw midpoint walks away from 0 by ~100 µs a second (half the drift
  // allowance times the handshake's age); none of it is shown.
  CHECK(largest_hidden_midpoint_ns > 1e6);
  CHECK(widest_unsettled_ns > 1e6);
  CHECK(unsettled >= 25);
  CHECK(one_sided >= 5);  // the handshake left the 30 s window
  CHECK(shown == 0);      // not even the first tick: one instant of reverse traffic pins no slope
}

TEST_CASE("one-sided evidence is reported as one-sided, from both orientations, not as a midpoint") {
  Scenario sc;
  sc.ab = Delay{DelayKind::exponential, 20'000, 30'000};
  sc.rate_hz_ba = 0;
  sc.theta_ns = [](double) { return 150e3; };
  Estimator est;
  synth::drive(est, synth::generate(sc, 0, 20), 0, 20, 1.0, [](std::int64_t) {});
  const auto fwd = *est.estimate(1, 2), rev = *est.estimate(2, 1);
  CHECK_FALSE(fwd.settled);
  CHECK_FALSE(fwd.offset_ns);
  const auto a = shown_offset(&fwd), b = shown_offset(&rev);
  CHECK(a.missing == OffsetMissing::one_sided);
  CHECK(a.missing_bound == MissingBound::lower);  // θ ≤ upper only: nothing from pull → push
  CHECK(b.missing == OffsetMissing::one_sided);
  CHECK(b.missing_bound == MissingBound::upper);
  CHECK_FALSE(a.offset_ns);
  CHECK_FALSE(a.bound_ns);
  CHECK(*fwd.upper_ns >= 150e3);
}

TEST_CASE("a settled two-sided interval is shown with its bound; empty and missing estimates say why") {
  Scenario sc;
  sc.ab = sc.ba = Delay{DelayKind::exponential, 20'000, 30'000};
  sc.theta_ns = [](double) { return -40e3; };
  Estimator est;
  synth::drive(est, synth::generate(sc, 0, 40), 0, 40, 1.0, [](std::int64_t) {});
  auto e = *est.estimate(1, 2);
  CHECK(e.settled);
  auto s = shown_offset(&e);
  REQUIRE(s.missing == OffsetMissing::none);
  CHECK(*s.offset_ns == *e.offset_ns);
  CHECK(*s.bound_ns == *e.bound_ns);
  CHECK(std::fabs(*s.offset_ns + 40e3) <= *s.bound_ns);
  auto j = to_json(e, name);
  CHECK(j["offset_missing"].is_null());
  CHECK(j["offset_missing_bound"].is_null());
  CHECK(j["at_risk_basis"] == "settled_interval");
  CHECK(j["at_risk"].is_boolean());

  e.empty_interval = true;  // a hull over guessed break points: it holds θ, its midpoint is no measurement
  CHECK(shown_offset(&e).missing == OffsetMissing::empty);
  CHECK(to_json(e, name)["offset_missing"] == "empty");
  e.lower_ns.reset();
  e.upper_ns.reset();
  CHECK(shown_offset(&e).missing == OffsetMissing::empty);  // even the newest bucket contradicts itself
  CHECK(shown_offset(nullptr).missing == OffsetMissing::no_estimate);
  const auto none = offset_fields(nullptr);
  CHECK(none["offset_seconds"].is_null());
  CHECK(none["offset_missing"] == "no_estimate");
  CHECK(none["at_risk"].is_null());
}

TEST_CASE("what-if says what it assumes for a pair without an offset, and never removes a midpoint") {
  Scenario sc;
  sc.ab = sc.ba = Delay{DelayKind::exponential, 20'000, 30'000};
  sc.rate_hz_ba = 0;  // one-way
  sc.theta_ns = [](double) { return 500e3; };
  Estimator est;
  synth::drive(est, synth::generate(sc, 0, 20), 0, 20, 1.0, [](std::int64_t) {});
  const auto models = *parse_error_models("gaussian:100us");
  const auto plain = what_if(est, models, 20'000'000'000);
  const auto removed = what_if(est, models, 20'000'000'000, {.remove_estimated_offset = true});
  REQUIRE(plain.rows.size() == 1);
  CHECK(plain.rows[0].offset_missing == OffsetMissing::one_sided);
  CHECK_FALSE(removed.rows[0].offset_removed);
  CHECK(removed.rows[0].rate[0] == plain.rows[0].rate[0]);  // spans as observed in both
  const auto j = to_json(removed, name);
  CHECK(j["pairs"][0]["offset_missing"] == "one_sided");
  CHECK(j["pairs"][0]["offset_assumption"] == "as_observed");
  const std::string text = render_what_if(plain, name);
  CHECK(text.find("note: push -> pull has no offset (one_sided, no pull -> push traffic)") != std::string::npos);
}
