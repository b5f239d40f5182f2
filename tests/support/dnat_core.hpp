// An AgentCore over a client and a server namespace where the client talks to a ClusterIP its own
// namespace DNATs to the server, as kube-proxy does, and that traffic: what the tests of the core
// through address translation (tests/unit/core/agent_core_nat_test.cpp) and of its rendering
// (tests/unit/api/nat_rendering_test.cpp) feed it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "core/agent_core.hpp"
#include "synthetic_halves.hpp"

namespace skewscope::test::dnat {

inline constexpr std::int64_t kMs = 1'000'000;
inline constexpr std::uint32_t kClientNetns = 11, kServerNetns = 22;

inline const Endpoint kClient{1, 40000, kClientNetns};
inline const Endpoint kVip{10, 80, kClientNetns, {10, 96, 0}};  // what the client's socket is connected to
inline const Endpoint kServer{2, 8080, kServerNetns};           // where the connection arrives
inline const Endpoint kClientAsSeen{1, 40000, kServerNetns};    // the client, from the server's socket

inline Address mapped(const Endpoint& e) {
  Address a{};
  put_ipv4_mapped(a.data(), e);
  return a;
}

// The conntrack entry of the client's namespace: original client -> VIP, reply server -> client.
inline translate::ConntrackEntry dnat_entry() {
  translate::ConntrackEntry e;
  e.protocol = 6;
  e.original = {mapped(kClient), mapped(kVip), kClient.port, kVip.port};
  e.reply = {mapped(kServer), mapped(kClient), kServer.port, kClient.port};
  return e;
}

// `n` requests of 100 bytes and replies of 30, 50 us one way, each side from its own socket.
inline std::vector<skewscope_half_event> traffic(int n) {
  std::vector<skewscope_half_event> ev;
  std::uint32_t request_seq = 1000, reply_seq = 9000;
  std::int64_t t = 1'000 * kMs;
  for (int i = 0; i < n; ++i) {
    ev.push_back(make_half(kClient, kVip, true, request_seq, 100, t));
    ev.push_back(make_half(kServer, kClientAsSeen, false, request_seq, 100, t + 50'000));
    ev.push_back(make_half(kServer, kClientAsSeen, true, reply_seq, 30, t + 60'000));
    ev.push_back(make_half(kClient, kVip, false, reply_seq, 30, t + 110'000));
    request_seq += 100;
    reply_seq += 30;
    t += kMs;
  }
  return ev;
}

inline AgentCore make_core() {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("client", kClientNetns));
  REQUIRE(domains.add_netns("server", kServerNetns));
  return AgentCore(std::move(domains), AgentCoreConfig{});
}

inline const PairReport* pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst) return &p;
  return nullptr;
}

inline std::uint64_t spans(const AgentReport& r, const std::string& src, const std::string& dst) {
  const PairReport* p = pair(r, src, dst);
  return p ? p->spans : 0;
}

}  // namespace skewscope::test::dnat
