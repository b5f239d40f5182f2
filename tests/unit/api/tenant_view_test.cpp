#include <doctest/doctest.h>

#include "api/tenant_view.hpp"

using namespace skewscope;
using nlohmann::json;

namespace {

TenantAccess two_tenants() {
  auto map = TenantMap::create({{"a", {"a*"}}, {"b", {"b*"}}, {"c", {"c*"}}});
  REQUIRE(map);
  TenantAccess access{*map, {}};
  const std::vector<std::string> users{"alice", "bob", "carol", "ops"};
  REQUIRE(bind_tenant_user(access, "alice=a", users));
  REQUIRE(bind_tenant_user(access, "bob=b", users));
  REQUIRE(bind_tenant_user(access, "carol=a,c", users));
  return access;
}

}  // namespace

TEST_CASE("binding a user to tenants checks the user and the tenants") {
  TenantAccess access = two_tenants();
  const std::vector<std::string> users{"alice", "bob", "carol", "ops"};
  CHECK(bind_tenant_user(access, "mallory=a", users).error.find("not a basic-auth user") != std::string::npos);
  CHECK(bind_tenant_user(access, "alice=b", users).error.find("bound twice") != std::string::npos);
  CHECK(bind_tenant_user(access, "ops=z", users).error.find("no tenant named 'z'") != std::string::npos);
  CHECK(bind_tenant_user(access, "ops=a,", users).error.find("empty tenant") != std::string::npos);
  CHECK(bind_tenant_user(access, "ops", users).error.find("USER=TENANT") != std::string::npos);
  CHECK(access.is_operator("ops"));
  CHECK_FALSE(access.is_operator("alice"));
}

TEST_CASE("a request's view: a tenant's user gets its own, 403 for any other, an operator chooses") {
  const TenantAccess access = two_tenants();
  const std::string alice = "alice", carol = "carol", ops = "ops", a = "a", b = "b", z = "z";
  CHECK(decide_scope(access, &alice, nullptr).tenant == "a");
  CHECK(decide_scope(access, &alice, &a).tenant == "a");
  auto other = decide_scope(access, &alice, &b);
  CHECK(other.status == 403);
  auto unknown = decide_scope(access, &alice, &z);
  CHECK(unknown.status == 403);  // the same answer whether the tenant exists or not
  CHECK(unknown.error.find("'z'") != std::string::npos);
  CHECK(decide_scope(access, &carol, nullptr).status == 400);  // several tenants: name one
  CHECK(decide_scope(access, &carol, nullptr).error.find("b") == std::string::npos);
  CHECK(decide_scope(access, &carol, &b).status == 403);
  CHECK_FALSE(decide_scope(access, &ops, nullptr).tenant);  // all
  CHECK(decide_scope(access, &ops, &b).tenant == "b");
  CHECK(decide_scope(access, &ops, &z).status == 404);
  CHECK_FALSE(decide_scope(access, nullptr, nullptr).tenant);  // no basic auth: operator
  CHECK(decide_scope(TenantAccess{}, nullptr, &a).status == 404);
}

TEST_CASE("a tenant's status holds its pairs and domains only, and no agent-wide counter") {
  auto map = TenantMap::create({{"a", {"a*"}}, {"b", {"b*"}}});
  REQUIRE(map);
  const json status = {
      {"health", 0},
      {"window_seconds", 30},
      {"pairs",
       {{{"src", "a1"}, {"dst", "a2"}, {"health", 1}, {"window_lost_halves", 7}, {"diagnosis", {{"cause", "x"}}}},
        {{"src", "b1"}, {"dst", "b2"}, {"health", 0}},
        {{"src", "a1"}, {"dst", "b1"}, {"health", 0}},
        {{"src", "infra"}, {"dst", "a1"}, {"health", 0}}}},
      {"capture",
       {{"up", true},
        {"lost", 9},
        {"events", 100},
        {"lost_by_domain", {{"a1", {{"ring_buffer_full", 1}}}, {"b1", {{"ring_buffer_full", 8}}}}},
        {"window_pairing", {{"floor", 0.5}, {"domains", {{"a2", {{"ratio", 1}}}, {"b2", {{"ratio", 0.1}}}}}}}}},
      {"clocks", {{"host", {{"status", "ok"}}}, {"domains", {{"a1", {}}, {"a2", {}}, {"b1", {}}, {"infra", {}}}}}},
      {"exchange", {{"records", 5}}},
      {"hosts", {{{"host", "b1"}}}}};
  const json a = tenant_status_json(status, *map, "a");
  CHECK(a["tenant"] == "a");
  REQUIRE(a["pairs"].size() == 1);
  CHECK(a["pairs"][0]["src"] == "a1");
  CHECK_FALSE(a["pairs"][0].contains("window_lost_halves"));
  CHECK_FALSE(a["pairs"][0].contains("diagnosis"));
  CHECK(a["health"] == 1);  // from its own pair, not the agent's 0
  CHECK(a["capture"]["lost_by_domain"] == json{{"a1", {{"ring_buffer_full", 1}}}});
  CHECK(a["capture"]["window_pairing"]["domains"].size() == 1);
  CHECK_FALSE(a["capture"].contains("lost"));
  CHECK_FALSE(a["capture"].contains("events"));
  CHECK(a["clocks"]["domains"].size() == 2);
  CHECK_FALSE(a["clocks"].contains("host"));
  CHECK_FALSE(a.contains("exchange"));
  CHECK_FALSE(a.contains("hosts"));
  CHECK(a.dump().find("b1") == std::string::npos);
  CHECK(a.dump().find("infra") == std::string::npos);
  const json b = tenant_status_json(status, *map, "b");
  CHECK(b["health"] == 0);
  const json none = tenant_status_json(json::object(), *map, "a");
  CHECK(none["health"].is_null());
  CHECK(none["unknown_reason"] == "no_pairs");
}

TEST_CASE("a tenant's /metrics keeps only samples labelled with its domains or its name") {
  auto map = TenantMap::create({{"a", {"a*"}}, {"b", {"b*"}}});
  REQUIRE(map);
  const std::string text =
      "# HELP skewscope_causality_health overall\n"
      "# TYPE skewscope_causality_health gauge\n"
      "skewscope_causality_health 0\n"
      "# HELP skewscope_pair_causality_health per pair\n"
      "# TYPE skewscope_pair_causality_health gauge\n"
      "skewscope_pair_causality_health{src=\"a1\",dst=\"a2\"} 1\n"
      "skewscope_pair_causality_health{src=\"b1\",dst=\"b2\"} 0\n"
      "skewscope_pair_causality_health{src=\"a1\",dst=\"b1\"} 0\n"
      "# HELP skewscope_window_pairing_ratio per domain\n"
      "# TYPE skewscope_window_pairing_ratio gauge\n"
      "skewscope_window_pairing_ratio{domain=\"b1\"} 1\n"
      "# HELP skewscope_host_suspect triangulated\n"
      "# TYPE skewscope_host_suspect gauge\n"
      "skewscope_host_suspect{host=\"a1\",cause=\"clock_step\"} 0\n"
      "skewscope_diagnosis{src=\"a1\",dst=\"a2\",cause=\"none\"} 1\n"
      "# HELP skewscope_policy_met per policy\n"
      "# TYPE skewscope_policy_met gauge\n"
      "skewscope_policy_met{policy=\"x\",tenant=\"a\"} 1\n"
      "skewscope_policy_met{policy=\"y\",tenant=\"\"} 1\n"
      "skewscope_policy_met{policy=\"z\",tenant=\"b\"} 0\n"
      "# HELP skewscope_http_auth_failures_total refusals\n"
      "# TYPE skewscope_http_auth_failures_total counter\n"
      "skewscope_http_auth_failures_total{reason=\"denied\"} 3\n";
  const std::string a = tenant_metrics_text(text, *map, "a");
  CHECK(a ==
        "# HELP skewscope_pair_causality_health per pair\n"
        "# TYPE skewscope_pair_causality_health gauge\n"
        "skewscope_pair_causality_health{src=\"a1\",dst=\"a2\"} 1\n"
        "# HELP skewscope_policy_met per policy\n"
        "# TYPE skewscope_policy_met gauge\n"
        "skewscope_policy_met{policy=\"x\",tenant=\"a\"} 1\n");
  // A label value with an escaped quote is read whole, not cut at the quote.
  CHECK(tenant_metrics_text("m{src=\"a\\\"1\",dst=\"a2\"} 1\n", *map, "a") == "m{src=\"a\\\"1\",dst=\"a2\"} 1\n");
  CHECK(tenant_metrics_text("m{src=\"b\\\"1\",dst=\"a2\"} 1\n", *map, "a").empty());
}

TEST_CASE("a tenant's policies are its own, without the file") {
  const json all = {{"file", {{"path", "/etc/p.yaml"}, {"last_error", "line 3: tenant b"}}},
                    {"policies",
                     {{{"name", "x"}, {"tenant", "a"}, {"pairs", {{{"src", "a1"}, {"window_lost_halves", 4}}}}},
                      {{"name", "y"}, {"tenant", "b"}, {"pairs", json::array()}},
                      {{"name", "z"}, {"tenant", ""}, {"pairs", json::array()}}}}};
  const json a = tenant_policies_json(all, "a");
  CHECK(a["policies"].size() == 1);
  CHECK(a["policies"][0]["name"] == "x");
  CHECK(a["policies"][0]["pairs"][0] == json{{"src", "a1"}});
  CHECK_FALSE(a.contains("file"));
}
