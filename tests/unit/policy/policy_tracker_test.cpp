#include <doctest/doctest.h>

#include "policy/policy_tracker.hpp"

using namespace skewscope;
using namespace skewscope::policy;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

PolicySet one_policy(std::optional<std::int64_t> max_unknown_ns = std::nullopt, std::int64_t precision_ns = 1'000'000) {
  Policy p;
  p.name = "p";
  p.domains = {"*"};
  p.precision_ns = precision_ns;
  p.max_unknown_ns = max_unknown_ns;
  return PolicySet{{p}};
}

PairEvidence good() {
  PairEvidence e;
  e.src = "a";
  e.dst = "b";
  e.spans = 10;
  e.lower_ns = -100;
  e.upper_ns = 100;
  return e;
}

PairEvidence inverted() {
  PairEvidence e = good();
  e.negative_spans = 1;
  return e;
}

}  // namespace

TEST_CASE("degraded mode fires and resolves only after several evaluations in a row") {
  PolicyTracker t;
  t.set_policies(one_policy());
  std::vector<PairEvidence> now = {good()};
  auto evidence = [&now](const Policy&) { return now; };
  std::int64_t clock = 0;
  auto step = [&] { return t.evaluate(clock += kSecond, evidence); };

  CHECK(step().empty());
  CHECK(t.states()[0].verdict.verdict == Verdict::met);
  CHECK_FALSE(t.states()[0].degraded);

  // One noisy window, then good again: no edge.
  now = {inverted()};
  CHECK(step().empty());
  CHECK(t.states()[0].verdict.verdict == Verdict::violated);
  now = {good()};
  CHECK(step().empty());

  // Not met kFireAfter times in a row: one firing edge, and no second one after.
  now = {inverted()};
  for (int i = 1; i < kFireAfter; ++i) CHECK(step().empty());
  auto edges = step();
  REQUIRE(edges.size() == 1);
  CHECK(edges[0].firing);
  CHECK(edges[0].state.verdict.verdict == Verdict::violated);
  CHECK(t.states()[0].degraded);
  CHECK(step().empty());

  // One good window does not resolve; kResolveAfter in a row do, once.
  now = {good()};
  CHECK(step().empty());
  now = {inverted()};
  CHECK(step().empty());
  now = {good()};
  for (int i = 1; i < kResolveAfter; ++i) CHECK(step().empty());
  edges = step();
  REQUIRE(edges.size() == 1);
  CHECK_FALSE(edges[0].firing);
  CHECK_FALSE(t.states()[0].degraded);
  CHECK(t.states()[0].fired_total == 1);
  CHECK(t.states()[0].resolved_total == 1);
}

TEST_CASE("max_unknown: unknown for longer than the limit counts as violated") {
  PolicyTracker t;
  t.set_policies(one_policy(3 * kSecond));
  std::vector<PairEvidence> now = {};  // no pair: unknown
  auto evidence = [&now](const Policy&) { return now; };
  t.evaluate(10 * kSecond, evidence);
  CHECK(t.states()[0].verdict.verdict == Verdict::unknown);
  t.evaluate(13 * kSecond, evidence);  // exactly the limit: still unknown
  CHECK(t.states()[0].verdict.verdict == Verdict::unknown);
  t.evaluate(14 * kSecond, evidence);
  CHECK(t.states()[0].verdict.verdict == Verdict::violated);
  CHECK(t.states()[0].verdict.reason == VerdictReason::unknown_too_long);
  now = {good()};
  t.evaluate(15 * kSecond, evidence);
  CHECK(t.states()[0].verdict.verdict == Verdict::met);
  CHECK_FALSE(t.states()[0].unknown_since_ns);
  now = {};
  t.evaluate(16 * kSecond, evidence);  // a new run of unknowns starts its own clock
  CHECK(t.states()[0].verdict.verdict == Verdict::unknown);
}

TEST_CASE("a reload keeps the history of the policies it keeps") {
  PolicyTracker t;
  t.set_policies(one_policy());
  auto bad = [](const Policy&) { return std::vector<PairEvidence>{inverted()}; };
  for (int i = 0; i < kFireAfter; ++i) t.evaluate((i + 1) * kSecond, bad);
  REQUIRE(t.states()[0].degraded);
  t.set_policies(one_policy(std::nullopt, 2'000'000));  // same name, new precision
  REQUIRE(t.states().size() == 1);
  CHECK(t.states()[0].degraded);
  CHECK(t.states()[0].policy.precision_ns == 2'000'000);
  Policy other;
  other.name = "q";
  other.domains = {"*"};
  other.precision_ns = 1;
  t.set_policies(PolicySet{{other}});
  REQUIRE(t.states().size() == 1);
  CHECK_FALSE(t.states()[0].degraded);
  CHECK(t.find("p") == nullptr);
}
