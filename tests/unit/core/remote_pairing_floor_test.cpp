// The pairing floor over halves that arrive from other agents: a host whose halves mostly fail to
// pair at the owner makes the owner's health unknown (halves_unpaired), as local halves do.
#include <doctest/doctest.h>

#include "core/agent_report.hpp"
#include "exchange/remote_pairing.hpp"
#include "remote_report.hpp"

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kRealtimeMinusMono = 1'790'000'000 * kSecond;

struct Owner {
  DomainRegistry domains{"owner", true};
  RemotePairing pairing{CorrelatorLimits{1 << 18, kSecond, kSecond}, 5 * kSecond, estimate::Config{}};
  Owner() { pairing.assign({0}, 0); }

  // One half shipped by `host` (domain `domain`) and consumed at `now`.
  void half(const char* host, const char* domain, HalfKind kind, const FlowKey& flow, std::uint32_t seq,
            std::int64_t now) {
    WireBatch b{host, {domain}, 0, 0, 0, {}};
    b.halves.push_back({kind, Transport::tcp, flow, seq, 10, now + kRealtimeMinusMono, 0});
    pairing.ingest(0, b, now, kRealtimeMinusMono, domains);
  }
  // `n` requests a -> b that pair, from t (1 ms apart).
  void paired(const FlowKey& flow, int n, std::int64_t t) {
    for (int i = 0; i < n; ++i) {
      half("host-a", "a", HalfKind::send, flow, 1000 + 10 * i, t + i * kMs);
      half("host-b", "b", HalfKind::recv, flow, 1000 + 10 * i, t + i * kMs + 50'000);
    }
  }
  AgentReport report(std::int64_t now) {
    pairing.tick(now, true);
    return test::remote_report(pairing, domains, now);
  }
  const DomainPairing* domain(const AgentReport& r, const char* name) {
    for (const auto& d : r.health.pairing)
      if (domains.name(d.domain) == name) return &d;
    return nullptr;
  }
};

}  // namespace

TEST_CASE("remote halves that mostly fail to pair put their domains below the floor") {
  Owner o;
  const FlowKey flow{v4(1), v4(2), 41000, 7000};
  o.paired(flow, 50, 10 * kSecond);
  // 300 sends from a whose receives b's agent shipped under another key (a translation no agent
  // undid): b's address is captured (its halves arrive), so the sends that age out count.
  const FlowKey to_vip{v4(1), v4(2), 41001, 80}, at_pod{v4(1), v4(2), 41001, 7000};
  for (int i = 0; i < 300; ++i) {
    const std::int64_t t = 10 * kSecond + 100 * kMs + i * kMs;
    o.half("host-a", "a", HalfKind::send, to_vip, 5000 + 10 * i, t);
    o.half("host-b", "b", HalfKind::recv, at_pod, 5000 + 10 * i, t + 50'000);
  }
  const AgentReport r = o.report(12 * kSecond);  // past send_max_age and the reorder allowance
  const DomainPairing* a = o.domain(r, "a");
  REQUIRE(a != nullptr);
  CHECK(a->paired_halves == 50);
  CHECK(a->unpaired_halves == 300);
  CHECK(a->below_floor);
  const DomainPairing* b = o.domain(r, "b");
  REQUIRE(b != nullptr);
  CHECK(b->paired_halves == 50);
  CHECK(b->unpaired_halves == 300);  // orphaned receives: no send seen covers them
  CHECK(b->below_floor);
  CHECK_FALSE(r.health.health.has_value());
  CHECK((r.health.unknown_reason == UnknownReason::halves_unpaired));
  REQUIRE(r.health.pairs.size() == 1);
  CHECK(r.health.pairs[0].spans == 50);
  CHECK_FALSE(r.health.pairs[0].health.has_value());
  CHECK((r.health.pairs[0].unknown_reason == UnknownReason::halves_unpaired));

  // Once the window (5 s) has forgotten them, the pair that pairs is healthy again.
  o.paired(flow, 200, 16 * kSecond);
  const AgentReport later = o.report(18 * kSecond);
  CHECK(o.domain(later, "a")->unpaired_halves == 0);
  CHECK(later.health.health == 1);
}

TEST_CASE("remote sends to a peer no agent captures are not held against the floor") {
  Owner o;
  o.paired(FlowKey{v4(1), v4(2), 41000, 7000}, 150, 10 * kSecond);
  // 300 sends to 10.77.0.9, a host without an agent, and 300 over loopback on a's host.
  for (int i = 0; i < 300; ++i) {
    o.half("host-a", "a", HalfKind::send, FlowKey{v4(1), v4(9), 42000, 80}, 10 * i, 10 * kSecond + i * kMs);
    Address lo{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
    o.half("host-a", "a", HalfKind::recv, FlowKey{lo, lo, 43000, 81}, 10 * i, 10 * kSecond + i * kMs);
  }
  const AgentReport r = o.report(12 * kSecond);
  const DomainPairing* a = o.domain(r, "a");
  REQUIRE(a != nullptr);
  CHECK(a->paired_halves == 150);
  CHECK(a->unpaired_halves == 0);
  CHECK_FALSE(a->below_floor);
  CHECK(r.health.health == 1);
}

TEST_CASE("a domain seen locally and through the exchange shows the sum, below the floor if either share is") {
  Owner o;
  const FlowKey flow{v4(1), v4(2), 41000, 7000};
  o.paired(flow, 10, 10 * kSecond);
  for (int i = 0; i < 100; ++i)
    o.half("host-a", "a", HalfKind::send, FlowKey{v4(1), v4(2), 41002, 80}, 10 * i, 10 * kSecond + i * kMs);
  o.pairing.tick(12 * kSecond, true);
  const DomainId a = *o.domains.find("a");
  for (bool local_below : {false, true}) {
    AgentReport r;
    r.domain_clocks.resize(o.domains.size());
    // Remotely a paired 10 halves of 110: below the floor; locally 1000 of 1000 (or of 1500).
    r.health.pairing.push_back(DomainPairing{a, 1000, local_below ? 500u : 0u, local_below});
    add_remote_results(r, o.pairing.results(12 * kSecond));
    const DomainPairing* merged = o.domain(r, "a");
    REQUIRE(merged != nullptr);
    CHECK(merged->paired_halves == 1010);
    CHECK(merged->unpaired_halves == (local_below ? 600 : 100));
    CHECK(merged->below_floor);  // 1010 of 1110 would pass: the cross-host share alone does not
    CHECK_FALSE(r.health.health.has_value());
    CHECK((r.health.unknown_reason == UnknownReason::halves_unpaired));
  }
}

}  // namespace skewscope::exchange
