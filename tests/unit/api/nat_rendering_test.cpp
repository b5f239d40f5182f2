// What the status JSON and /metrics say of address translation (--nat-conntrack), on an agent
// core fed the DNAT traffic of tests/support/dnat_core.hpp.
#include <doctest/doctest.h>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"
#include "dnat_core.hpp"

using namespace skewscope;
using namespace skewscope::test::dnat;

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
