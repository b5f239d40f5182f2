#include <doctest/doctest.h>

#include "core/agent_report.hpp"
#include "exchange/remote_pairing.hpp"
#include "remote_report.hpp"

namespace skewscope::exchange {
namespace {

Address gid(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kRealtimeMinusMono = 1'790'000'000 * kSecond;

// Host `me` (QPN my_qpn) connected to host `peer` (QPN peer_qpn) at RTR `generation`.
WireRdmaHalf half(HalfKind kind, std::uint8_t me, std::uint32_t my_qpn, std::uint8_t peer, std::uint32_t peer_qpn,
                  std::uint64_t ordinal, std::int64_t realtime, std::uint64_t generation = 1) {
  return WireRdmaHalf{kind, gid(me), gid(peer), my_qpn, peer_qpn, 100u + me, generation, ordinal, 64, realtime, 0};
}

struct Fixture {
  DomainRegistry domains{"owner", true};
  RemotePairing pairing{CorrelatorLimits{}, 30 * kSecond, estimate::Config{}};
  void ingest(const char* domain, std::vector<WireRdmaHalf> halves, std::int64_t now) {
    WireBatch b{std::string("host-") + domain, {domain}, 0, 0, 0, {}};
    b.rdma_halves = std::move(halves);
    pairing.ingest(0, b, now, kRealtimeMinusMono, domains);
  }
  const PairReport* pair(const char* src, const char* dst, std::int64_t now) {
    r = test::remote_report(pairing, domains, now);
    for (const auto& p : r.health.pairs)
      if (domains.name(p.key.src) == src && domains.name(p.key.dst) == dst) return &p;
    return nullptr;
  }
  AgentReport r;
};

}  // namespace

TEST_CASE("RDMA halves of two hosts pair on the owner by (sender QPN, receiver QPN, ordinal), in any order") {
  Fixture f;
  const std::int64_t t0 = 100 * kSecond, real0 = t0 + kRealtimeMinusMono;
  f.pairing.assign({0}, t0);
  // b's receives arrive first, in reverse; b's clock is 1 ms behind; messages take 20 us.
  std::vector<WireRdmaHalf> recvs, sends;
  for (std::uint64_t k = 0; k < 10; ++k) {
    recvs.insert(recvs.begin(), half(HalfKind::recv, 2, 0x200, 1, 0x100, k, real0 + k * 1000 + 20'000 - 1'000'000));
    sends.push_back(half(HalfKind::send, 1, 0x100, 2, 0x200, k, real0 + k * 1000));
  }
  f.ingest("b", recvs, t0 + 1000);
  f.ingest("a", sends, t0 + 2000);
  const PairReport* p = f.pair("a", "b", t0 + kSecond);
  REQUIRE(p);
  CHECK(p->spans == 10);
  CHECK(p->negative_spans == 10);
  CHECK(f.pairing.rdma_counters().pairs == 10);
  CHECK(f.pairing.rdma_counters().no_connection == 0);
}

TEST_CASE("a reconnect (new generation) retires the waiting halves of the old connection") {
  Fixture f;
  const std::int64_t t0 = 100 * kSecond, real0 = t0 + kRealtimeMinusMono;
  f.pairing.assign({0}, t0);
  f.ingest("a", {half(HalfKind::send, 1, 0x100, 2, 0x200, 0, real0, 1)}, t0);
  // The QP reconnects: ordinal 0 again, another RTR. The old send must not pair with the new receive.
  f.ingest("a", {half(HalfKind::send, 1, 0x100, 2, 0x200, 0, real0 + 10, 2)}, t0);
  f.ingest("b", {half(HalfKind::recv, 2, 0x200, 1, 0x100, 0, real0 + 50, 7)}, t0);
  const auto c = f.pairing.rdma_counters();
  CHECK(c.superseded == 1);
  CHECK(c.pairs == 1);
  const PairReport* p = f.pair("a", "b", t0 + kSecond);
  REQUIRE(p);
  REQUIRE(p->window.min_span_ns);
  CHECK(*p->window.min_span_ns == 40);  // paired with the second send, not the first
}

TEST_CASE("the same QPNs between other hosts never pair across host pairs") {
  Fixture f;
  const std::int64_t t0 = 100 * kSecond, real0 = t0 + kRealtimeMinusMono;
  f.pairing.assign({0}, t0);
  // Host 1 -> host 2 and host 3 -> host 4 happen to use the same QPNs.
  f.ingest("a", {half(HalfKind::send, 1, 0x100, 2, 0x200, 0, real0)}, t0);
  f.ingest("d", {half(HalfKind::recv, 4, 0x200, 3, 0x100, 0, real0 + 10)}, t0);
  CHECK(f.pairing.rdma_counters().pairs == 0);
  f.ingest("b", {half(HalfKind::recv, 2, 0x200, 1, 0x100, 0, real0 + 30)}, t0);
  CHECK(f.pairing.rdma_counters().pairs == 1);
  // Unpaired halves age out and are counted; a revoked partition counts its waiting ones.
  f.pairing.tick(t0 + 11 * kSecond, false);
  CHECK(f.pairing.rdma_counters().recvs_expired == 1);
  f.ingest("c", {half(HalfKind::send, 3, 0x100, 4, 0x200, 5, real0)}, t0 + 12 * kSecond);
  f.pairing.revoke({0});
  CHECK(f.pairing.drops(DropReason::partition_revoked) == 1);
  CHECK(f.pairing.rdma_counters().sends == 2);
}

}  // namespace skewscope::exchange
