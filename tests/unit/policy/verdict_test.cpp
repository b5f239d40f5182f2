#include <doctest/doctest.h>

#include "policy/verdict.hpp"

using namespace skewscope;
using namespace skewscope::policy;

namespace {

Policy policy_1ms() {
  Policy p;
  p.name = "p";
  p.domains = {"*"};
  p.precision_ns = 1'000'000;
  return p;
}

// Traffic both ways in a complete window: θ ∈ [lower, upper].
PairEvidence two_sided(double lower_ns, double upper_ns) {
  PairEvidence e;
  e.src = "a";
  e.dst = "b";
  e.spans = 100;
  e.lower_ns = lower_ns;
  e.upper_ns = upper_ns;
  return e;
}

}  // namespace

TEST_CASE("met: the largest offset the interval admits is within the precision") {
  auto v = decide_pair(policy_1ms(), two_sided(-200'000, 600'000));
  CHECK(v.verdict == Verdict::met);
  CHECK(v.reason == VerdictReason::within_precision);
  CHECK(v.bound_ns == doctest::Approx(600'000));
  CHECK(decide_pair(policy_1ms(), two_sided(-1'000'000, 1'000'000)).verdict == Verdict::met);  // at the edge
}

TEST_CASE("the hosts' clock error bounds are added where known") {
  auto e = two_sided(-200'000, 600'000);
  e.clock_bound_ns = 300'000;
  auto v = decide_pair(policy_1ms(), e);
  CHECK(v.bound_ns == doctest::Approx(900'000));
  CHECK(v.verdict == Verdict::met);
  e.clock_bound_ns = 500'000;
  v = decide_pair(policy_1ms(), e);
  CHECK(v.verdict == Verdict::unknown);
  CHECK(v.reason == VerdictReason::bound_too_wide);
}

TEST_CASE("violated: an inversion in the window, whatever else is known") {
  auto e = two_sided(-200'000, 600'000);
  e.negative_spans = 1;
  e.window_lost_halves = 5;  // seen is certain, losses or not
  auto v = decide_pair(policy_1ms(), e);
  CHECK(v.verdict == Verdict::violated);
  CHECK(v.reason == VerdictReason::inversion);
}

TEST_CASE("violated: the interval proves the offset is beyond the precision, even one-sided") {
  CHECK(decide_pair(policy_1ms(), two_sided(1'200'000, 1'500'000)).reason == VerdictReason::beyond_precision);
  CHECK(decide_pair(policy_1ms(), two_sided(-3'000'000, -1'100'000)).verdict == Verdict::violated);
  PairEvidence lower_only = two_sided(0, 0);
  lower_only.upper_ns.reset();
  lower_only.lower_ns = 2'000'000;
  CHECK(decide_pair(policy_1ms(), lower_only).reason == VerdictReason::beyond_precision);
}

TEST_CASE("unknown: a bound wider than the precision proves nothing either way") {
  auto v = decide_pair(policy_1ms(), two_sided(-500'000, 1'500'000));
  CHECK(v.verdict == Verdict::unknown);
  CHECK(v.reason == VerdictReason::bound_too_wide);
}

TEST_CASE("unknown: one-sided traffic") {
  auto e = two_sided(-100, 100);
  e.lower_ns.reset();
  auto v = decide_pair(policy_1ms(), e);
  CHECK(v.verdict == Verdict::unknown);
  CHECK(v.reason == VerdictReason::one_sided);
  CHECK_FALSE(v.bound_ns);
}

TEST_CASE("unknown: missing evidence, never met") {
  auto check = [](PairEvidence e, VerdictReason why, Policy p = policy_1ms()) {
    auto v = decide_pair(p, e);
    CHECK(v.verdict == Verdict::unknown);
    CHECK(v.reason == why);
  };
  auto e = two_sided(-100, 100);
  e.capture_up = false;
  check(e, VerdictReason::capture_down);
  e = two_sided(-100, 100);
  e.window_lost_halves = 1;
  check(e, VerdictReason::halves_lost);
  e = two_sided(-100, 100);
  e.spans = 0;  // an empty window is never met
  check(e, VerdictReason::no_spans);
  e = two_sided(-100, 100);
  e.unpaired = true;
  check(e, VerdictReason::halves_unpaired);
  e = two_sided(-100, 100);
  e.window_filling = true;
  check(e, VerdictReason::window_filling);
  Policy wants_more = policy_1ms();
  wants_more.min_spans = 101;
  check(two_sided(-100, 100), VerdictReason::too_few_spans, wants_more);
  wants_more.min_spans = 100;
  CHECK(decide_pair(wants_more, two_sided(-100, 100)).verdict == Verdict::met);
}

TEST_CASE("a policy: violated over unknown over met; no pair is unknown") {
  Policy p = policy_1ms();
  auto none = decide_policy(p, {});
  CHECK(none.verdict == Verdict::unknown);
  CHECK(none.reason == VerdictReason::no_pairs);
  auto met = two_sided(-100, 100);
  auto one_sided = two_sided(-100, 100);
  one_sided.upper_ns.reset();
  auto inverted = two_sided(-100, 100);
  inverted.negative_spans = 3;
  CHECK(decide_policy(p, {met, met}).verdict == Verdict::met);
  auto u = decide_policy(p, {met, one_sided});
  CHECK(u.verdict == Verdict::unknown);
  CHECK(u.reason == VerdictReason::one_sided);
  CHECK(u.pairs.size() == 2);
  auto v = decide_policy(p, {met, one_sided, inverted});
  CHECK(v.verdict == Verdict::violated);
  CHECK(v.reason == VerdictReason::inversion);
}
