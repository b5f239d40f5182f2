#include <doctest/doctest.h>

#include "core/report_diagnosis.hpp"
#include "diagnose/engine.hpp"

using namespace skewscope;

namespace {
constexpr std::int64_t kSecond = 1'000'000'000;

PairReport health_pair(DomainId src, DomainId dst, Transport t, std::uint64_t spans, std::uint64_t negative,
                       bool complete = true) {
  PairReport p;
  p.key = {src, dst, t};
  p.window.spans = spans;
  p.window.negative_spans = negative;
  p.capture_complete = complete;
  return p;
}

estimate::PairEstimate two_sided(DomainId src, DomainId dst, double offset_ns, std::int64_t at_ns) {
  estimate::PairEstimate e;
  e.src = src;
  e.dst = dst;
  e.evaluated_at_ns = at_ns;
  e.lower_ns = offset_ns - 10'000;
  e.upper_ns = offset_ns + 10'000;
  e.offset_ns = offset_ns;
  e.bound_ns = 10'000;
  e.settled = true;
  e.forward_min_span_ns = 20'000;
  e.reverse_min_span_ns = 20'000;
  return e;
}

AgentReport report_of_three() {
  AgentReport r;
  r.domain_names = {"a", "b", "c"};
  r.domain_clocks.resize(3);
  return r;
}
}  // namespace

TEST_CASE("both orientations and every transport of a pair of domains are one observation") {
  AgentReport r = report_of_three();
  r.health.pairs = {health_pair(0, 1, Transport::tcp, 100, 2), health_pair(1, 0, Transport::tcp, 50, 1),
                    health_pair(0, 1, Transport::kafka, 10, 0, false), health_pair(1, 1, Transport::tcp, 5, 0)};
  r.estimates = {two_sided(0, 1, 3'000, 10 * kSecond)};
  diagnose::HistoryBook book;
  auto obs = pair_observations(r, book);
  REQUIRE(obs.size() == 1);
  CHECK(obs[0].src == "a");
  CHECK(obs[0].dst == "b");
  CHECK(obs[0].spans == 160);
  CHECK(obs[0].negative_spans == 3);
  CHECK_FALSE(obs[0].capture_complete);  // the kafka pair's window lost halves
  CHECK(obs[0].has_estimate);
  CHECK(obs[0].two_sided);
  CHECK(*obs[0].now.offset_ns == doctest::Approx(3'000));
}

TEST_CASE("a one-sided estimate gives no offset, and the history's step reaches the observation") {
  AgentReport r = report_of_three();
  r.health.pairs = {health_pair(0, 1, Transport::tcp, 100, 0)};
  estimate::PairEstimate one_sided = two_sided(0, 1, 0, 10 * kSecond);
  one_sided.lower_ns.reset();
  r.estimates = {one_sided};
  diagnose::HistoryBook book;
  auto obs = pair_observations(r, book);
  REQUIRE(obs.size() == 1);
  CHECK_FALSE(obs[0].two_sided);
  CHECK_FALSE(obs[0].now.offset_ns.has_value());

  // A step in the history of b→a (stored reversed) shows on a→b with the sign of θ(a→b).
  const std::vector<std::string> names = {"a", "b", "c"};
  for (int i = 1; i <= 5; ++i) record_estimates(book, {two_sided(1, 0, 0, i * kSecond)}, names, i * kSecond);
  auto broken = two_sided(1, 0, -4e6, 6 * kSecond);
  broken.empty_interval = true;
  broken.settled = false;
  record_estimates(book, {broken}, names, 6 * kSecond);
  r.estimates = {two_sided(0, 1, 4e6, 6 * kSecond)};
  obs = pair_observations(r, book);
  REQUIRE(obs[0].shift);
  CHECK(obs[0].shift->kind == diagnose::Cause::clock_step);
  CHECK(obs[0].shift->value == doctest::Approx(4e6));
  CHECK(obs[0].history_settled);
}

TEST_CASE("local domains carry this host's clock readings, remote ones only their declared bound") {
  AgentReport r = report_of_three();
  r.exchange.emplace();
  r.exchange->remote_domains = 1;  // c came through the exchange
  r.domain_clocks[0].error_bound_ns = 2'000;
  r.domain_clocks[2].error_bound_ns = 9'000;
  r.clocks.polled = true;
  r.clocks.status = clocks::ClockStatus::kDisrupted;
  clocks::PtpSocketSnapshot ptp;
  ptp.port_state = 4;  // LISTENING
  ptp.gm_present = false;
  r.clocks.ptp.push_back(ptp);
  auto hosts = host_clocks(r);
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].readings);
  CHECK(hosts[0].ptp);
  CHECK(*hosts[0].port_state == "LISTENING");
  CHECK(*hosts[0].error_bound_ns == doctest::Approx(2'000));
  CHECK(diagnose::ptp_lost(hosts[0]));
  CHECK(diagnose::ptp_lost(hosts[1]));  // b is local too: same kernel, same clock
  CHECK_FALSE(hosts[2].readings);
  CHECK_FALSE(hosts[2].ptp);
  CHECK(*hosts[2].error_bound_ns == doctest::Approx(9'000));
  CHECK_FALSE(diagnose::ptp_lost(hosts[2]));
}

TEST_CASE("add_diagnosis fills the report and ages the changes") {
  AgentReport r = report_of_three();
  r.health.pairs = {health_pair(0, 1, Transport::tcp, 100, 0)};
  r.estimates = {two_sided(0, 1, 1'000, 10 * kSecond)};
  diagnose::HistoryBook book;
  add_diagnosis(r, book, 11 * kSecond);
  REQUIRE(r.diagnosis.pairs.size() == 1);
  CHECK(r.diagnosis.pairs[0].cause == diagnose::Cause::none);
  CHECK(r.diagnosis.incidents == 0);
}
