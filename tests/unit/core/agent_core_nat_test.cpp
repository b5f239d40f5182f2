// The agent core through address translation (--nat-conntrack): a client that talks to a
// ClusterIP its own namespace DNATs to the server, as kube-proxy does.
#include <doctest/doctest.h>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"
#include "core/agent_core.hpp"
#include "synthetic_halves.hpp"

using namespace skewscope;
using namespace skewscope::test;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint32_t kClientNetns = 11, kServerNetns = 22;

const Endpoint kClient{1, 40000, kClientNetns};
const Endpoint kVip{10, 80, kClientNetns, {10, 96, 0}};  // what the client's socket is connected to
const Endpoint kServer{2, 8080, kServerNetns};           // where the connection arrives
const Endpoint kClientAsSeen{1, 40000, kServerNetns};    // the client, from the server's socket

Address mapped(const Endpoint& e) {
  Address a{};
  put_ipv4_mapped(a.data(), e);
  return a;
}

// The conntrack entry of the client's namespace: original client -> VIP, reply server -> client.
translate::ConntrackEntry dnat_entry() {
  translate::ConntrackEntry e;
  e.protocol = 6;
  e.original = {mapped(kClient), mapped(kVip), kClient.port, kVip.port};
  e.reply = {mapped(kServer), mapped(kClient), kServer.port, kClient.port};
  return e;
}

// `n` requests of 100 bytes and replies of 30, 50 us one way, each side from its own socket.
std::vector<skewscope_half_event> traffic(int n) {
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

AgentCore make_core() {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("client", kClientNetns));
  REQUIRE(domains.add_netns("server", kServerNetns));
  return AgentCore(std::move(domains), AgentCoreConfig{});
}

const PairReport* pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst) return &p;
  return nullptr;
}

std::uint64_t spans(const AgentReport& r, const std::string& src, const std::string& dst) {
  const PairReport* p = pair(r, src, dst);
  return p ? p->spans : 0;
}

}  // namespace

TEST_CASE("through a DNAT the keys never meet without the conntrack entry") {
  auto core = make_core();
  core.ingest(traffic(100));
  auto r = core.report(1'200 * kMs);
  CHECK(spans(r, "client", "server") == 0);
  CHECK(spans(r, "server", "client") == 0);
  CHECK_FALSE(r.nat);
}

TEST_CASE("with the client namespace's conntrack entry every request and reply pairs") {
  auto core = make_core();
  core.enable_nat(translate::NatLimits{});
  translate::ConntrackWatchReport watch;
  watch.namespaces.push_back({"/run/netns/client"});
  core.observe_conntrack({dnat_entry()}, 0, watch);
  core.ingest(traffic(100));
  auto r = core.report(1'200 * kMs);
  CHECK(spans(r, "client", "server") == 100);
  CHECK(spans(r, "server", "client") == 100);
  CHECK(pair(r, "client", "server")->negative_spans == 0);
  REQUIRE(r.nat);
  CHECK(r.nat->mappings == 1);
  CHECK(r.nat->table.halves_translated == 200);  // the client's sends and receives
  CHECK(r.nat->watch.namespaces.size() == 1);
}

TEST_CASE("a simulated skew is seen through the translation, in the right direction only") {
  auto core = make_core();
  core.enable_nat(translate::NatLimits{});
  core.observe_conntrack({dnat_entry()}, 0, {});
  core.simulated_clocks().set(*core.domains().find("server"), -5 * kMs, 0, 0);
  core.ingest(traffic(100));
  auto r = core.report(1'200 * kMs);
  REQUIRE(pair(r, "client", "server"));
  CHECK(pair(r, "client", "server")->negative_spans == 100);
  CHECK(pair(r, "server", "client")->negative_spans == 0);
  CHECK(pair(r, "client", "server")->health == 0);
}

TEST_CASE("the status JSON and the metrics show the translation, and nothing of it without --nat-conntrack") {
  auto plain = make_core();
  CHECK(status_json(plain.report(0)).at("nat").is_null());
  CHECK(render_agent_metrics(plain.report(0), "test").find("skewscope_nat_") == std::string::npos);

  auto core = make_core();
  core.enable_nat(translate::NatLimits{});
  translate::ConntrackWatchReport watch;
  watch.namespaces.push_back({"/run/netns/client", 3, 2, 1, 2, 0});
  watch.rejected[static_cast<std::size_t>(translate::ConntrackReject::truncated)] = 4;
  translate::ConntrackEntry plain_entry = dnat_entry();
  plain_entry.reply = {plain_entry.original.dst_addr, plain_entry.original.src_addr, plain_entry.original.dst_port,
                       plain_entry.original.src_port};
  core.observe_conntrack({dnat_entry(), plain_entry}, 0, watch);
  core.ingest(traffic(3));
  const AgentReport r = core.report(1'200 * kMs);
  const auto nat = status_json(r).at("nat");
  CHECK(nat.at("mappings") == 1);
  CHECK(nat.at("entries").at("translated") == 1);
  CHECK(nat.at("entries").at("plain") == 1);
  CHECK(nat.at("halves_translated") == 6);
  CHECK(nat.at("rejected").at("truncated") == 4);
  CHECK(nat.at("namespaces").at(0).at("netns") == "/run/netns/client");
  CHECK(nat.at("namespaces").at(0).at("overflows") == 1);
  const std::string metrics = render_agent_metrics(r, "test");
  CHECK(metrics.find("skewscope_nat_mappings 1\n") != std::string::npos);
  CHECK(metrics.find("skewscope_nat_halves_translated_total 6\n") != std::string::npos);
  CHECK(metrics.find("skewscope_nat_event_overflows_total{netns=\"/run/netns/client\"} 1\n") != std::string::npos);
  CHECK(metrics.find("skewscope_nat_rejected_total{reason=\"truncated\"} 4\n") != std::string::npos);
}
