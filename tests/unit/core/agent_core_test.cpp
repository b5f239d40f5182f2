#include "core/agent_core.hpp"

#include <doctest/doctest.h>

#include "synthetic_halves.hpp"

using namespace skewscope;
using namespace skewscope::test;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint32_t kPreNetns = 11, kInferNetns = 22;

// pre -> infer requests and infer -> pre replies, 50 us one-way, reads of other sizes than writes.
std::vector<skewscope_half_event> request_reply_traffic(int messages) {
  SyntheticStream request({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  SyntheticStream reply({2, 5555, kInferNetns}, {1, 40000, kPreNetns}, 90000);
  std::vector<skewscope_half_event> ev;
  std::int64_t t = 1'000 * kMs;
  for (int i = 0; i < messages; ++i) {
    ev.push_back(request.write(100, t));
    ev.push_back(request.read(60, t + 50'000));
    ev.push_back(request.read(40, t + 51'000));
    ev.push_back(reply.write(30, t + 60'000));
    ev.push_back(reply.read(30, t + 110'000));
    t += kMs;
  }
  return ev;
}

AgentCore make_core(bool only_domains = true) {
  DomainRegistry domains("host", only_domains);
  REQUIRE(domains.add_netns("pre", kPreNetns));
  REQUIRE(domains.add_netns("infer", kInferNetns));
  return AgentCore(std::move(domains), AgentCoreConfig{});
}

const PairReport& pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst) return p;
  FAIL("no pair " << src << " -> " << dst);
  throw 0;
}

AgentReport run(AgentCore& core, std::vector<skewscope_half_event> events) {
  SyntheticSource source(std::move(events), 37);
  std::vector<skewscope_half_event> batch;
  while (source.poll(batch, std::chrono::milliseconds(0))) {
    core.ingest(batch);
    batch.clear();
  }
  return core.report(1'000 * kMs + 500 * kMs, source.counters());
}

}  // namespace

TEST_CASE("one shared clock: every send pairs and no span is negative") {
  auto core = make_core();
  auto r = run(core, request_reply_traffic(200));
  CHECK(r.health.health == 1);
  CHECK(pair(r, "pre", "infer").spans == 200);
  CHECK(pair(r, "infer", "pre").spans == 200);
  CHECK(pair(r, "pre", "infer").negative_spans == 0);
  CHECK(*pair(r, "pre", "infer").window.min_span_ns == 50'000);
  CHECK(r.correlator.pairs == 400);
}

TEST_CASE("receiver's clock 5 ms behind: its incoming spans are all negative, health 0") {
  auto core = make_core();
  core.simulated_clocks().set(*core.domains().find("infer"), -5 * kMs, 0, 0);
  auto r = run(core, request_reply_traffic(100));
  CHECK(r.health.health == 0);
  CHECK(pair(r, "pre", "infer").negative_span_ratio == doctest::Approx(1.0));
  CHECK(pair(r, "pre", "infer").state == PairState::violated);
  CHECK(pair(r, "infer", "pre").negative_spans == 0);
  CHECK(pair(r, "infer", "pre").health == 1);
}

TEST_CASE("receiver's clock 5 ms ahead: the reverse direction inverts") {
  auto core = make_core();
  core.simulated_clocks().set(*core.domains().find("infer"), +5 * kMs, 0, 0);
  auto r = run(core, request_reply_traffic(100));
  CHECK(pair(r, "pre", "infer").negative_spans == 0);
  CHECK(pair(r, "infer", "pre").negative_span_ratio == doctest::Approx(1.0));
}

TEST_CASE("a drifting clock crosses the onset part-way") {
  auto core = make_core();
  // infer's clock starts 40 us behind and falls back 100 ppm: after (50-40)us/1e-4 = 100 ms the
  // 50 us requests into infer start to invert.
  core.simulated_clocks().set(*core.domains().find("infer"), -40'000, -100, 1'000 * kMs);
  auto r = run(core, request_reply_traffic(300));
  auto p = pair(r, "pre", "infer");
  CHECK(p.negative_spans > 150);
  CHECK(p.negative_spans < 250);
}

TEST_CASE("events outside the declared domains are counted, not paired, with --only-domains") {
  auto core = make_core(true);
  SyntheticStream other({5, 1000, 99}, {6, 2000, 98}, 1);
  auto r = run(core, {other.write(10, 1), other.read(10, 2)});
  CHECK(r.ingest.outside_domains == 2);
  CHECK(r.health.pairs.empty());
}

TEST_CASE("without --only-domains, unknown namespaces belong to the host domain") {
  auto core = make_core(false);
  SyntheticStream other({5, 1000, 99}, {6, 2000, 98}, 1);
  auto r = run(core, {other.write(10, 1), other.read(10, 2)});
  REQUIRE(r.health.pairs.size() == 1);
  CHECK(r.name(r.health.pairs[0].key.src) == "host");
}

TEST_CASE("the agent's own HTTP traffic is filtered and counted") {
  auto core = make_core(false);
  core.set_own_endpoint(9477, 77);
  SyntheticStream scrape({1, 9477, 77}, {1, 50000, 77}, 1);
  auto r = run(core, {scrape.write(10, 1), scrape.read(10, 2)});
  CHECK(r.ingest.own_traffic == 2);
  CHECK(r.health.pairs.empty());
}

TEST_CASE("malformed records are rejected and counted by reason") {
  auto core = make_core(false);
  SyntheticStream s({1, 1, kPreNetns}, {2, 2, kInferNetns}, 1);
  auto bad_kind = s.write(10, 1);
  bad_kind.kind = 9;
  auto zero = s.write(10, 2);
  zero.bytes = 0;
  auto no_port = s.write(10, 3);
  no_port.remote_port = 0;
  auto r = run(core, {bad_kind, zero, no_port});
  CHECK(r.ingest.rejected[static_cast<int>(DecodeReject::bad_kind)] == 1);
  CHECK(r.ingest.rejected[static_cast<int>(DecodeReject::zero_bytes)] == 1);
  CHECK(r.ingest.rejected[static_cast<int>(DecodeReject::zero_port)] == 1);
}

TEST_CASE("a half that cannot be keyed is a loss in the window: the pairs it touches are not vouched for") {
  auto core = make_core();
  std::vector<skewscope_half_event> events = request_reply_traffic(100);
  SyntheticStream s({2, 5556, kInferNetns}, {1, 40001, kPreNetns}, 5);
  auto no_port = s.read(30, 1'000 * kMs + 10 * kMs);
  no_port.local_port = 0;  // a read on a socket with no tuple left
  events.push_back(no_port);
  auto r = run(core, events);
  CHECK(r.ingest.rejected[static_cast<int>(DecodeReject::zero_port)] == 1);
  CHECK(r.health.window_lost_halves == 1);
  CHECK_FALSE(r.health.health.has_value());
  CHECK((r.health.unknown_reason == UnknownReason::halves_lost));
  CHECK((pair(r, "pre", "infer").unknown_reason == UnknownReason::halves_lost));

  auto clean = make_core();
  auto zero = s.read(30, 1'000 * kMs + 20 * kMs);
  zero.bytes = 0;  // moved nothing: no loss
  std::vector<skewscope_half_event> with_zero = request_reply_traffic(100);
  with_zero.push_back(zero);
  auto z = run(clean, with_zero);
  CHECK(z.health.window_lost_halves == 0);
  CHECK(z.health.health == 1);
}

TEST_CASE("a negative span deeper than the hosts' clock error bounds is a violation the sources missed") {
  for (auto [bound_ns, expect_unexplained] : {std::pair<std::int64_t, bool>{1 * kMs, true}, {10 * kMs, false}}) {
    auto core = make_core();
    core.set_clock_bound(bound_ns);  // each host within ±bound: together 2·bound apart at most
    core.simulated_clocks().set(*core.domains().find("infer"), -5 * kMs, 0, 0);
    auto r = run(core, request_reply_traffic(50));
    const auto& p = pair(r, "pre", "infer");
    CHECK(p.negative_spans == 50);
    CHECK(p.unexplained_negative_spans == (expect_unexplained ? 50u : 0u));
  }
  auto unknown = make_core();  // no bound known: nothing can be called unexplained
  unknown.simulated_clocks().set(*unknown.domains().find("infer"), -5 * kMs, 0, 0);
  CHECK(pair(run(unknown, request_reply_traffic(50)), "pre", "infer").unexplained_negative_spans == 0);
}

TEST_CASE("at_risk from the clock sources: bounds wider than Δt_min before any inversion") {
  auto core = make_core();
  auto events = request_reply_traffic(2000);  // 2 s of traffic, 50 us each way: Δt_min = 50 us
  SyntheticSource source(events, 64);
  std::vector<skewscope_half_event> batch;
  while (source.poll(batch, std::chrono::milliseconds(0))) {
    core.ingest(batch);
    core.tick(static_cast<std::int64_t>(batch.back().ts_ns));
    batch.clear();
  }
  const std::int64_t now = 1'000 * kMs + 2'000 * kMs;
  core.tick(now + 1'000 * kMs);
  core.set_clock_bound(10'000);  // ±10 us each: 20 us apart at most, below Δt_min
  CHECK(pair(core.report(now, {}), "pre", "infer").state == PairState::ok);
  CHECK_FALSE(core.pair_at_risk(1, 2));
  core.set_clock_bound(30'000);  // ±30 us each: 60 us apart possible, above Δt_min
  CHECK(core.pair_at_risk(*core.domains().find("pre"), *core.domains().find("infer")));
  auto r = core.report(now, {});
  CHECK(pair(r, "pre", "infer").state == PairState::at_risk);
  CHECK(pair(r, "pre", "infer").negative_spans == 0);
}

TEST_CASE("the recent-span ring keeps the newest items, oldest first, and reuses its slots") {
  RecentRing<int> ring(3);
  CHECK(ring.size() == 0);
  ring.push(1);
  ring.push(2);
  CHECK(ring.size() == 2);
  CHECK(ring[0] == 1);
  CHECK(ring[1] == 2);
  for (int v = 3; v <= 7; ++v) ring.push(v);
  REQUIRE(ring.size() == 3);
  CHECK(ring[0] == 5);
  CHECK(ring[1] == 6);
  CHECK(ring[2] == 7);
  RecentRing<int> one(0);  // a capacity of 0 is one slot
  one.push(4);
  one.push(9);
  CHECK(one.size() == 1);
  CHECK(one[0] == 9);
}
