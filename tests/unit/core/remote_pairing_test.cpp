#include "exchange/remote_pairing.hpp"

#include <doctest/doctest.h>

#include "core/agent_report.hpp"
#include "remote_report.hpp"

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kRealtimeMinusMono = 1'790'000'000 * kSecond;

struct Fixture {
  DomainRegistry domains{"owner", true};
  RemotePairing pairing{CorrelatorLimits{}, 2 * kSecond, estimate::Config{}};
  FlowKey flow{v4(1), v4(2), 41000, 7000};

  // One message a -> b: the send from host a's agent, the receive from host b's, both stamped
  // in wall-clock time by their own (possibly skewed) clocks.
  void message(std::int32_t partition, std::uint32_t seq, std::int64_t true_mono, std::int64_t skew_b,
               std::int64_t now) {
    WireBatch from_a{"host-a", {"a"}, 0, 0, 0, {}};
    from_a.halves.push_back({HalfKind::send, Transport::tcp, flow, seq, 10, true_mono + kRealtimeMinusMono, 0});
    WireBatch from_b{"host-b", {"b"}, 0, 0, 0, {}};
    from_b.halves.push_back(
        {HalfKind::recv, Transport::tcp, flow, seq, 10, true_mono + 50'000 + skew_b + kRealtimeMinusMono, 0});
    pairing.ingest(partition, from_b, now, kRealtimeMinusMono, domains);  // order does not matter
    pairing.ingest(partition, from_a, now, kRealtimeMinusMono, domains);
  }

  AgentReport report(std::int64_t now) { return test::remote_report(pairing, domains, now); }
};

}  // namespace

TEST_CASE("halves from two hosts pair on the owner of their partition") {
  Fixture f;
  const std::int64_t t0 = 100 * kSecond;
  f.pairing.assign({3}, t0);
  for (std::uint32_t i = 0; i < 20; ++i)
    f.message(3, 1000 + 10 * i, t0 + i * 1'000'000, -5'000'000, t0 + i * 1'000'000 + 30'000'000);
  AgentReport r = f.report(t0 + 100'000'000);
  REQUIRE(r.health.pairs.size() == 1);
  const PairReport& p = r.health.pairs[0];
  CHECK(f.domains.name(p.key.src) == "a");
  CHECK(f.domains.name(p.key.dst) == "b");
  CHECK(p.spans == 20);
  CHECK(p.negative_spans == 20);  // b's clock 5 ms behind, messages take 50 us
  CHECK(p.health == 0);
  // Owned for less than a window, but a violation seen is certain: health 0, state violated
  // (a pair without one would be unknown, window_filling).
  CHECK((p.state == PairState::violated));
  CHECK(r.health.health == 0);

  f.message(3, 2000, t0 + 2900'000'000, -5'000'000, t0 + 2950'000'000);  // the window has filled
  AgentReport later = f.report(t0 + 3 * kSecond);
  REQUIRE(later.health.pairs.size() == 1);
  CHECK((later.health.pairs[0].state != PairState::unknown));
}

TEST_CASE("records of a partition this agent does not own are not paired, and their halves are counted") {
  Fixture f;
  f.pairing.assign({1}, 0);
  f.message(2, 5, kSecond, 0, kSecond);  // fetched just before partition 2 was revoked
  CHECK(f.report(kSecond).health.pairs.empty());
  CHECK(f.pairing.drops(DropReason::partition_revoked) == 2);
  ExchangeReport x;
  f.pairing.fill(x);
  CHECK(x.spans_paired == 0);
}

TEST_CASE("records the broker no longer had are counted, and make the partition's pairs unknown for a window") {
  Fixture f;
  const std::int64_t t0 = 100 * kSecond;
  f.pairing.assign({3}, t0 - 10 * kSecond);
  for (std::uint32_t i = 0; i < 20; ++i) f.message(3, 1000 + 10 * i, t0 + i * 1'000'000, 0, t0 + i * 1'000'000);
  CHECK((f.report(t0 + kSecond).health.pairs.at(0).state != PairState::unknown));
  f.pairing.note_gap(3, 4, t0 + kSecond);
  CHECK(f.pairing.drops(DropReason::offset_gap) == 4);
  CHECK((f.report(t0 + 2 * kSecond).health.pairs.at(0).state == PairState::unknown));
  // A gap on a partition revoked before the fetch's records reached the core still counts.
  f.pairing.note_gap(7, 3, t0 + 2 * kSecond);
  CHECK(f.pairing.drops(DropReason::offset_gap) == 7);
}

TEST_CASE("the spans an owner paired stay counted after their partition moves away and back") {
  Fixture f;
  f.pairing.assign({0}, 0);
  for (std::uint32_t i = 0; i < 5; ++i) f.message(0, 10 * i, kSecond + i, 0, kSecond);
  f.pairing.revoke({0});
  f.pairing.assign({0}, 2 * kSecond);
  for (std::uint32_t i = 0; i < 3; ++i) f.message(0, 100 + 10 * i, 2 * kSecond + i, 0, 2 * kSecond);
  AgentReport r = f.report(2 * kSecond + 1);
  REQUIRE(r.health.pairs.size() == 1);
  CHECK(r.health.pairs[0].spans == 3);  // the pair's own count restarted with its partition
  ExchangeReport x;
  f.pairing.fill(x);
  CHECK(x.spans_paired == 8);
  CHECK(f.pairing.drops(DropReason::partition_revoked) == 0);  // nothing was waiting
}

TEST_CASE("a revoked partition takes its state with it and counts what was waiting") {
  Fixture f;
  f.pairing.assign({0, 1}, 0);
  WireBatch lone{"host-a", {"a"}, 0, 0, 0, {}};
  lone.halves.push_back({HalfKind::send, Transport::tcp, f.flow, 7, 10, kRealtimeMinusMono + kSecond, 0});
  f.pairing.ingest(0, lone, kSecond, kRealtimeMinusMono, f.domains);
  f.message(1, 100, kSecond, 0, kSecond);
  f.pairing.revoke({0});
  CHECK(f.pairing.drops(DropReason::partition_revoked) == 1);
  CHECK(f.pairing.owned() == std::vector<std::int32_t>{1});
  // Reassigned: it starts empty and unknown again.
  f.pairing.assign({0}, 5 * kSecond);
  f.message(0, 200, 5 * kSecond, 0, 5 * kSecond);
  f.message(1, 300, 5 * kSecond, 0, 5 * kSecond);
  AgentReport r = f.report(5 * kSecond + 1);
  REQUIRE(r.health.pairs.size() == 2);
  int unknown = 0;
  for (const auto& p : r.health.pairs) unknown += p.state == PairState::unknown;
  CHECK(unknown == 1);  // partition 1 has been owned for 5 s, partition 0 just arrived
}

TEST_CASE("a batch that says halves were dropped before it makes the pair uncertain for a window") {
  Fixture f;
  f.pairing.assign({0}, 0);
  WireBatch b{"host-a", {"a"}, 0, 0, 4, {}};
  f.pairing.ingest(0, b, 10 * kSecond, kRealtimeMinusMono, f.domains);
  f.message(0, 1, 10 * kSecond, 0, 10 * kSecond);
  CHECK((f.report(11 * kSecond).health.pairs.at(0).state == PairState::unknown));
  f.message(0, 50, 12900'000'000, 0, 12900'000'000);
  CHECK((f.report(13 * kSecond).health.pairs.at(0).state != PairState::unknown));
}

TEST_CASE("remote domain names are bounded and the overflow counted") {
  DomainRegistry domains{"owner", true};
  RemotePairing pairing{CorrelatorLimits{}, kSecond, estimate::Config{}, 2};
  pairing.assign({0}, 0);
  WireBatch b{"host-a", {"x", "y", "z"}, 0, 0, 0, {}};
  FlowKey flow{v4(1), v4(2), 1, 2};
  for (std::uint32_t d = 0; d < 3; ++d) b.halves.push_back({HalfKind::send, Transport::tcp, flow, d, 1, 0, d});
  pairing.ingest(0, b, 0, 0, domains);
  CHECK(domains.remote_count() == 2);
  CHECK(pairing.drops(DropReason::remote_domain_full) == 1);
}

TEST_CASE("a span's time axis is its receive's wall clock on this host's monotonic base, clamped") {
  Fixture f;
  f.pairing.assign({0}, 0);
  // The receiver's clock is an hour ahead: its spans must still land in the owner's window.
  f.message(0, 1, 50 * kSecond, 3600 * kSecond, 50 * kSecond + 20'000'000);
  AgentReport r = f.report(50 * kSecond + 30'000'000);
  REQUIRE(r.health.pairs.size() == 1);
  CHECK(r.health.pairs[0].window.spans == 1);
}

}  // namespace skewscope::exchange
