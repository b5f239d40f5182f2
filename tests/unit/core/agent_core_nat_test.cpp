// The agent core through address translation (--nat-conntrack): a client that talks to a
// ClusterIP its own namespace DNATs to the server, as kube-proxy does.
#include <doctest/doctest.h>

#include "core/agent_core.hpp"
#include "dnat_core.hpp"

using namespace skewscope;
using namespace skewscope::test::dnat;

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
