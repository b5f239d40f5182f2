// AgentCore's RDMA path: raw verbs records -> domains, simulated clock -> pairing -> health.
#include <doctest/doctest.h>

#include "core/agent_core.hpp"

using namespace skewscope;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint32_t kNetnsA = 11, kNetnsB = 22;

skewscope_rdma_event record(std::uint8_t kind, std::uint32_t netns, std::uint32_t pid, std::uint32_t qpn) {
  skewscope_rdma_event e{};
  e.kind = kind;
  e.netns_ino = netns;
  e.pid = pid;
  e.qpn = qpn;
  e.ts_source = SKEWSCOPE_RDMA_TS_PROBE;
  return e;
}

skewscope_rdma_event connect(std::uint32_t netns, std::uint32_t pid, std::uint32_t qpn, std::uint32_t peer,
                             bool tracked) {
  auto e = record(SKEWSCOPE_RDMA_CONNECT, netns, pid, qpn);
  e.peer_qpn = peer;
  e.opcode = tracked ? 1 : 0;
  e.gid[10] = e.gid[11] = 0xff;
  return e;
}

skewscope_rdma_event half(std::uint8_t kind, std::uint32_t netns, std::uint32_t pid, std::uint32_t qpn,
                          std::uint64_t ordinal, std::int64_t t) {
  auto e = record(kind, netns, pid, qpn);
  e.ordinal = ordinal;
  e.bytes = 256;
  e.ts_ns = static_cast<std::uint64_t>(t);
  return e;
}

AgentCore make_core() {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("a", kNetnsA));
  REQUIRE(domains.add_netns("b", kNetnsB));
  return AgentCore(std::move(domains), AgentCoreConfig{});
}

const PairReport* pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst && p.key.transport == Transport::rdma) return &p;
  return nullptr;
}

// a:QP 100 <-> b:QP 200, `n` messages a -> b, 30 us one-way.
std::vector<skewscope_rdma_event> traffic(int n, bool tracked) {
  std::vector<skewscope_rdma_event> ev{connect(kNetnsA, 1, 100, 200, tracked), connect(kNetnsB, 2, 200, 100, tracked)};
  for (int i = 0; i < n; ++i) {
    const std::int64_t t = 1000 * kMs + i * kMs;
    ev.push_back(half(SKEWSCOPE_RDMA_SEND, kNetnsA, 1, 100, static_cast<std::uint64_t>(i), t));
    ev.push_back(half(SKEWSCOPE_RDMA_RECV, kNetnsB, 2, 200, static_cast<std::uint64_t>(i), t + 30'000));
  }
  return ev;
}

}  // namespace

TEST_CASE("RDMA records become rdma spans between the right domains, none negative with one clock") {
  auto core = make_core();
  core.observe_rdma_source(RdmaSourceCounters{});
  core.ingest_rdma(traffic(100, true));
  auto r = core.report(1200 * kMs);
  const PairReport* p = pair(r, "a", "b");
  REQUIRE(p);
  CHECK(p->spans == 100);
  CHECK(p->negative_spans == 0);
  CHECK_FALSE(pair(r, "b", "a"));
  REQUIRE(r.rdma);
  CHECK(r.rdma->pairing.pairs == 100);
  CHECK(r.rdma->pairing.connects == 2);
}

TEST_CASE("a simulated clock error on the receiver inverts RDMA spans") {
  auto core = make_core();
  core.simulated_clocks().set(*core.domains().find("b"), -1 * kMs, 0, 0);
  core.ingest_rdma(traffic(50, true));
  auto r = core.report(1200 * kMs);
  const PairReport* p = pair(r, "a", "b");
  REQUIRE(p);
  CHECK(p->negative_spans == 50);
  CHECK_FALSE(r.rdma);  // no RDMA source observed: no section
}

TEST_CASE("untracked QPs and records of no declared domain are counted, never paired") {
  auto core = make_core();
  core.observe_rdma_source(RdmaSourceCounters{});
  core.ingest_rdma(traffic(10, false));
  core.ingest_rdma({half(SKEWSCOPE_RDMA_SEND, 99, 3, 5, 0, 1000 * kMs)});
  auto r = core.report(1200 * kMs);
  CHECK_FALSE(pair(r, "a", "b"));
  REQUIRE(r.rdma);
  CHECK(r.rdma->pairing.untracked_connects == 2);
  CHECK(r.rdma->pairing.no_connection == 20);
  CHECK(r.rdma->outside_domains == 1);
}

namespace {

Address v4_gid(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

// a's QP 100 connected to host 10.77.0.`peer` QP 200; its local GID 10.77.0.1 when `local_known`.
skewscope_rdma_event connect_to(std::uint8_t peer, bool local_known) {
  auto e = connect(kNetnsA, 1, 100, 200, true);
  const Address p = v4_gid(peer), l = v4_gid(1);
  std::copy(p.begin(), p.end(), e.gid);
  if (local_known) {
    std::copy(l.begin(), l.end(), e.local_gid);
    e.local_gid_known = 1;
  }
  e.ts_ns = 777;
  return e;
}

}  // namespace

TEST_CASE("with the exchange, an RDMA half whose peer GID is another host's address is shipped, keyed by both GIDs") {
  auto core = make_core();
  core.observe_rdma_source(RdmaSourceCounters{});
  core.enable_exchange(exchange::CoreExchangeConfig{});
  core.set_owned_addresses({v4_gid(1)});
  core.ingest_rdma({connect_to(2, true), half(SKEWSCOPE_RDMA_SEND, kNetnsA, 1, 100, 0, 1000 * kMs),
                    half(SKEWSCOPE_RDMA_SEND, kNetnsA, 1, 100, 1, 1001 * kMs)});
  std::vector<exchange::OutgoingRdmaHalf> out;
  core.take_outgoing_rdma(out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].wire.local_gid == v4_gid(1));
  CHECK(out[0].wire.peer_gid == v4_gid(2));
  CHECK(out[0].wire.local_qpn == 100);
  CHECK(out[0].wire.peer_qpn == 200);
  CHECK(out[0].wire.generation == 777);
  CHECK(out[1].wire.ordinal == 1);
  CHECK(out[1].capture_ns == 1001 * kMs);
  auto r = core.report(1200 * kMs);
  REQUIRE(r.rdma);
  REQUIRE(r.rdma->exchange);
  CHECK(r.rdma->exchange->shipped == 2);
  CHECK(r.rdma->pairing.sends == 0);  // not paired here
}

TEST_CASE("with the exchange, a peer GID that is a local address pairs locally; no local GID is a counted drop") {
  auto core = make_core();
  core.observe_rdma_source(RdmaSourceCounters{});
  core.enable_exchange(exchange::CoreExchangeConfig{});
  core.set_owned_addresses({v4_gid(1), v4_gid(2)});
  core.ingest_rdma({connect_to(2, false), half(SKEWSCOPE_RDMA_SEND, kNetnsA, 1, 100, 0, 1000 * kMs)});
  std::vector<exchange::OutgoingRdmaHalf> out;
  core.take_outgoing_rdma(out);
  CHECK(out.empty());
  CHECK(core.report(1200 * kMs).rdma->pairing.sends == 1);  // local: waits for its receive here

  core.set_owned_addresses({v4_gid(1)});  // now the peer is elsewhere, and the local GID unknown
  core.ingest_rdma({half(SKEWSCOPE_RDMA_SEND, kNetnsA, 1, 100, 1, 1001 * kMs)});
  core.take_outgoing_rdma(out);
  CHECK(out.empty());
  auto r = core.report(1200 * kMs);
  CHECK(r.rdma->exchange->no_local_gid == 1);
  CHECK(r.rdma->exchange->shipped == 0);
}
