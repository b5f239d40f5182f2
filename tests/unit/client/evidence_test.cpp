// Never "healthy" without evidence: a pair whose window emptied, a domain whose halves
// mostly fail to pair, and what the status JSON, /metrics, the table and the exit code say then.
#include <doctest/doctest.h>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"
#include "client/status_merge.hpp"
#include "client/status_table.hpp"
#include "core/agent_core.hpp"
#include "synthetic_core.hpp"

using namespace skewscope;
using namespace skewscope::test;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSecond = 1'000 * kMs;
// A short window and send age: the evidence runs out within seconds of synthetic time.
constexpr PreInferCoreSettings kEvidenceCore{.window_ns = 5 * kSecond, .send_max_age_ns = kSecond};

// What DNAT in the client's OUTPUT chain does to the halves: pre's socket talks to the VIP
// (address 9), infer's to pre's own address; no send finds its receive, either way.
std::vector<skewscope_half_event> dnat_traffic(int messages, std::int64_t start) {
  SyntheticStream client_out({1, 41000, kPreNetns}, {9, 80, kPreNetns}, 5);
  SyntheticStream server_in({1, 41000, kInferNetns}, {2, 8080, kInferNetns}, 5);
  SyntheticStream server_out({2, 8080, kInferNetns}, {1, 41000, kInferNetns}, 7000);
  SyntheticStream client_in({9, 80, kPreNetns}, {1, 41000, kPreNetns}, 7000);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < messages; ++i) {
    const std::int64_t t = start + i * kMs;
    ev.push_back(client_out.write(100, t));
    ev.push_back(server_in.read(100, t + 50'000));
    ev.push_back(server_out.write(30, t + 60'000));
    ev.push_back(client_in.read(30, t + 110'000));
  }
  return ev;
}

// Traffic to a host no agent captures (address 7): every send ages out unpaired.
std::vector<skewscope_half_event> uncaptured_peer_traffic(int messages, std::int64_t start) {
  SyntheticStream out({1, 42000, kPreNetns}, {7, 5432, kPreNetns}, 11);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < messages; ++i) ev.push_back(out.write(50, start + i * kMs));
  return ev;
}

// Ticks every 100 ms from `from` to `to`, as the capture thread would.
void tick(AgentCore& core, std::int64_t from, std::int64_t to) {
  for (std::int64_t t = from; t <= to; t += 100 * kMs) core.tick(t);
}

const PairReport& pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst) return p;
  FAIL("no pair " << src << " -> " << dst);
  throw 0;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("traffic stops for longer than the window: unknown, health null, last span age kept, exit 1") {
  auto core = make_pre_infer_core(kEvidenceCore);
  feed(core, pre_infer_traffic(100, kSecond));
  tick(core, kSecond, 2 * kSecond);
  auto busy = core.report(2 * kSecond);
  CHECK(busy.health.health == 1);
  CHECK(status_exit_code(status_json(busy)) == 0);

  tick(core, 2 * kSecond, 9 * kSecond);
  auto r = core.report(9 * kSecond);  // the window (5 s) holds no span
  const auto& p = pair(r, "pre", "infer");
  CHECK(p.window.spans == 0);
  CHECK(p.state == PairState::unknown);
  CHECK_FALSE(p.health);
  CHECK(p.unknown_reason == UnknownReason::no_spans);
  REQUIRE(p.last_span_age_ns);
  CHECK(*p.last_span_age_ns == 9 * kSecond - (kSecond + 99 * kMs + 50'000));  // the last request's read
  CHECK_FALSE(r.health.health);
  CHECK(r.health.unknown_reason == UnknownReason::no_pairs);

  auto j = status_json(r);
  CHECK(j["health"].is_null());
  CHECK(j["unknown_reason"] == "no_pair_known");
  CHECK(j["health_reason"] == "unknown: no pair has a span (or a known health) in the window");
  CHECK(j["pairs"][0]["health"].is_null());
  CHECK(j["pairs"][0]["state"] == "unknown");
  CHECK(j["pairs"][0]["unknown_reason"] == "no_spans_in_window");
  CHECK(j["pairs"][0]["last_span_age_seconds"].get<double>() == doctest::Approx(7.9).epsilon(0.01));
  CHECK(status_exit_code(j) == 1);
  const std::string table = render_status_table(j);
  CHECK(has(table, "causality_health ?"));
  CHECK(has(table, "pre -> infer tcp: health unknown, no_spans_in_window (last span 7.9"));

  const std::string m = render_agent_metrics(r, "test");
  CHECK_FALSE(has(m, "\nskewscope_pair_causality_health{"));
  CHECK_FALSE(has(m, "\nskewscope_causality_health "));
  CHECK(has(m, "skewscope_health_unknown{reason=\"no_pair_known\"} 1\n"));
}

TEST_CASE("one silent pair beside a busy one: the agent is healthy, the silent pair is not vouched for") {
  auto core = make_pre_infer_core(kEvidenceCore);
  feed(core, pre_infer_traffic(100, kSecond));
  SyntheticStream late({1, 43000, kPreNetns}, {2, 6000, kInferNetns}, 1);  // a second flow, same pair
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < 100; ++i) {
    ev.push_back(late.write(10, 8 * kSecond + i * kMs));
    ev.push_back(late.read(10, 8 * kSecond + i * kMs + 40'000));
  }
  feed(core, ev);
  tick(core, kSecond, 9 * kSecond);
  auto r = core.report(9 * kSecond);
  CHECK(pair(r, "pre", "infer").health == 1);
  CHECK_FALSE(pair(r, "infer", "pre").health);  // its replies stopped 8 s ago
  CHECK(r.health.health == 1);
  const auto j = status_json(r);
  CHECK(j["health_reason"].is_null());
  CHECK(status_exit_code(j) == 1);
  const std::string m = render_agent_metrics(r, "test");
  CHECK(has(m, "skewscope_causality_health 1\n"));
  CHECK(has(m, "skewscope_pair_causality_health{src=\"pre\",dst=\"infer\"} 1\n"));
  CHECK_FALSE(has(m, "skewscope_pair_causality_health{src=\"infer\",dst=\"pre\"}"));
  CHECK_FALSE(has(m, "skewscope_health_unknown{"));
}

TEST_CASE("DNAT: halves that cannot pair drive the pairing floor, health unknown with the share unpaired") {
  auto core = make_pre_infer_core(kEvidenceCore);
  feed(core, pre_infer_traffic(10, kSecond));  // some real pairs: without the floor health would be 1
  feed(core, dnat_traffic(500, kSecond + 20 * kMs));
  tick(core, kSecond, 3 * kSecond);
  auto r = core.report(3 * kSecond);
  CHECK(r.correlator.sends_expired == 1000);
  CHECK(r.correlator.recvs_orphaned == 1000);
  // pre's 1000 halves to and from the VIP have no captured peer; infer's 1000 have pre's address.
  REQUIRE(r.health.pairing.size() == 2);
  const DomainPairing& infer = r.health.pairing[1];
  CHECK(r.name(infer.domain) == "infer");
  CHECK(infer.paired_halves == 20);
  CHECK(infer.unpaired_halves == 1000);
  CHECK(infer.below_floor);
  CHECK(r.health.pairing[0].unpaired_halves == 0);
  CHECK_FALSE(r.health.health);
  CHECK(r.health.unknown_reason == UnknownReason::halves_unpaired);
  CHECK(pair(r, "pre", "infer").unknown_reason == UnknownReason::halves_unpaired);

  const auto j = status_json(r);
  CHECK(j["unknown_reason"] == "halves_unpaired");
  CHECK(j["health_reason"] == "unknown: 98% of halves unpaired in the window (infer 1000 of 1020)");
  CHECK(j["capture"]["window_pairing"]["domains"]["infer"]["below_floor"] == true);
  CHECK(j["capture"]["window_pairing"]["floor"] == 0.9);
  CHECK(j["capture"]["unpaired_recvs"] == 1000);
  CHECK(status_exit_code(j) == 1);
  const std::string m = render_agent_metrics(r, "test");
  CHECK(has(m, "skewscope_health_unknown{reason=\"halves_unpaired\"} 1\n"));
  CHECK(has(m, "skewscope_window_unpaired_halves{domain=\"infer\"} 1000\n"));
  CHECK(has(m, "skewscope_window_pairing_ratio{domain=\"infer\"} 0.0196"));
  CHECK_FALSE(has(m, "\nskewscope_causality_health "));

  // Once the unpaired halves have left the window and traffic pairs again, health is known.
  feed(core, pre_infer_traffic(100, 10 * kSecond));
  tick(core, 3 * kSecond, 11 * kSecond);
  CHECK(core.report(11 * kSecond).health.health == 1);
}

TEST_CASE("sends to a host without an agent are not pairing failures") {
  auto core = make_pre_infer_core(kEvidenceCore);
  feed(core, pre_infer_traffic(50, kSecond));
  feed(core, uncaptured_peer_traffic(1000, kSecond));
  tick(core, kSecond, 3 * kSecond);
  auto r = core.report(3 * kSecond);
  CHECK(r.correlator.sends_expired == 1000);
  for (const auto& d : r.health.pairing) CHECK(d.unpaired_halves == 0);
  CHECK(r.health.health == 1);
}

TEST_CASE("a loopback peer is never counted: every namespace has 127.0.0.1, undeclared helpers sit there") {
  auto core = make_pre_infer_core(kEvidenceCore);
  feed(core, pre_infer_traffic(50, kSecond));
  // pre talks to a local forwarder outside every domain; its own halves on loopback are captured.
  const Endpoint local_app{1, 43000, kPreNetns, {127, 0, 0}}, forwarder{1, 9092, kPreNetns, {127, 0, 0}};
  SyntheticStream out(local_app, forwarder, 21), back(forwarder, local_app, 500);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < 500; ++i) {
    ev.push_back(out.write(40, kSecond + i * kMs));
    ev.push_back(back.read(40, kSecond + i * kMs + 30'000));
  }
  feed(core, ev);
  tick(core, kSecond, 3 * kSecond);
  auto r = core.report(3 * kSecond);
  CHECK(r.correlator.sends_expired == 500);
  CHECK(r.correlator.recvs_orphaned == 500);
  for (const auto& d : r.health.pairing) CHECK(d.unpaired_halves == 0);
  CHECK(r.health.health == 1);
}

TEST_CASE("a message read in several reads: continuation receives, not unpaired ones") {
  auto core = make_pre_infer_core(kEvidenceCore);
  SyntheticStream big({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 3);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < 5; ++i) {
    const std::int64_t t = kSecond + i * 10 * kMs;
    ev.push_back(big.write(8 * 65536, t));
    for (int k = 0; k < 8; ++k) ev.push_back(big.read(65536, t + (k + 1) * 100'000));
  }
  feed(core, ev);
  tick(core, kSecond, 3 * kSecond);
  auto r = core.report(3 * kSecond);
  CHECK(r.correlator.pairs == 5);
  CHECK(r.correlator.recvs_orphaned == 0);
  CHECK(r.correlator.recvs_without_start == 35);
  const std::string m = render_agent_metrics(r, "test");
  CHECK(has(m, "skewscope_unpaired_halves_total{kind=\"recv\"} 0\n"));
  CHECK(has(m, "skewscope_continuation_receives_total 35\n"));
  CHECK(status_json(r)["capture"]["continuation_recvs"] == 35);
}

TEST_CASE("receives from a sender that is not traced are orphaned") {
  auto core = make_pre_infer_core(kEvidenceCore);
  SyntheticStream untraced({7, 5432, kPreNetns}, {1, 40000, kPreNetns}, 3);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < 20; ++i) ev.push_back(untraced.read(100, kSecond + i * kMs));
  feed(core, ev);
  tick(core, kSecond, 3 * kSecond);
  auto r = core.report(3 * kSecond);
  CHECK(r.correlator.recvs_orphaned == 20);
  for (const auto& d : r.health.pairing) CHECK(d.unpaired_halves == 0);  // its peer is not captured
}
