#include <doctest/doctest.h>

#include "policy/evidence.hpp"

using namespace skewscope;
using namespace skewscope::policy;

namespace {

PairReport pair(DomainId src, DomainId dst, std::uint64_t spans, std::uint64_t negative, Transport t = Transport::tcp) {
  PairReport p;
  p.key = {src, dst, t};
  p.window.spans = spans;
  p.window.negative_spans = negative;
  p.unknown_reason = UnknownReason::none;
  return p;
}

AgentReport three_domains() {
  AgentReport r;
  r.domain_names = {"db-1", "app-1", "web"};
  r.domain_clocks.resize(3);
  return r;
}

Policy covering(std::vector<std::string> globs) {
  Policy p;
  p.name = "p";
  p.domains = std::move(globs);
  p.precision_ns = 1'000'000;
  return p;
}

}  // namespace

TEST_CASE("both directions of a pair merge into one evidence, oriented as the estimate") {
  AgentReport r = three_domains();
  r.health.pairs = {pair(0, 1, 10, 0), pair(1, 0, 5, 2), pair(0, 2, 7, 0)};
  estimate::PairEstimate e;
  e.src = 0;
  e.dst = 1;
  e.lower_ns = -50;
  e.upper_ns = 80;
  r.estimates = {e};
  auto covered = covered_evidence(covering({"db-*", "app-*"}), r);
  REQUIRE(covered.size() == 1);
  CHECK(covered[0].src == "db-1");
  CHECK(covered[0].dst == "app-1");
  CHECK(covered[0].spans == 15);
  CHECK(covered[0].negative_spans == 2);
  CHECK(covered[0].lower_ns == -50);
  CHECK(covered[0].upper_ns == 80);
  CHECK_FALSE(covered[0].clock_bound_ns);  // unknown on either host: not added

  CHECK(covered_evidence(covering({"*"}), r).size() == 2);
  CHECK(covered_evidence(covering({"nothing"}), r).empty());
}

TEST_CASE("clock bounds count only when both hosts declare one; losses and pairing carry over") {
  AgentReport r = three_domains();
  auto p = pair(2, 0, 10, 0);
  p.window_lost_halves = 4;
  p.unknown_reason = UnknownReason::halves_unpaired;
  r.health.pairs = {p, pair(0, 0, 3, 0)};  // a pair within one domain has no offset: skipped
  r.domain_clocks[0].error_bound_ns = 1000;
  r.domain_clocks[2].error_bound_ns = 500;
  auto covered = covered_evidence(covering({"*"}), r);
  REQUIRE(covered.size() == 1);
  CHECK(covered[0].src == "db-1");
  CHECK(covered[0].dst == "web");
  CHECK(covered[0].clock_bound_ns == 1500);
  CHECK(covered[0].window_lost_halves == 4);
  CHECK(covered[0].unpaired);
  CHECK_FALSE(covered[0].lower_ns);
}

TEST_CASE("transports are separate pairs and filtered by the policy") {
  AgentReport r = three_domains();
  r.health.pairs = {pair(0, 1, 10, 0, Transport::tcp), pair(0, 1, 3, 0, Transport::kafka)};
  CHECK(covered_evidence(covering({"*"}), r).size() == 2);
  Policy kafka_only = covering({"*"});
  kafka_only.transports = {Transport::kafka};
  auto covered = covered_evidence(kafka_only, r);
  REQUIRE(covered.size() == 1);
  CHECK(covered[0].transport == Transport::kafka);
  CHECK(covered[0].spans == 3);
}
