#include <doctest/doctest.h>

#include "policy/policy_spec.hpp"

using namespace skewscope;
using namespace skewscope::policy;

namespace {

// The error names the line: every rejection below checks which one.
void rejects_at(const char* yaml, int line, const char* what) {
  auto parsed = parse_policies(yaml);
  REQUIRE_FALSE(parsed);
  CAPTURE(parsed.error);
  CHECK(parsed.error.rfind("line " + std::to_string(line) + ":", 0) == 0);
  CHECK(parsed.error.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("a full policy file is read with every field") {
  auto parsed = parse_policies(R"(policies:
  - name: audit-trail
    tenant: payments
    precision: 100us
    domains: [db-*, app-1]
    transports: [tcp, kafka]
    max_unknown: 30s
    min_spans: 20
    degraded:
      alertmanager: http://127.0.0.1:9093
      webhook: https://hooks.example/skew
      untrusted_spans: false
  - name: dashboard
    precision: 10ms
    domains: "*"
)");
  REQUIRE(parsed);
  REQUIRE(parsed->policies.size() == 2);
  const Policy& a = parsed->policies[0];
  CHECK(a.name == "audit-trail");
  CHECK(a.tenant == "payments");
  CHECK(a.precision_ns == 100'000);
  CHECK(a.domains == std::vector<std::string>{"db-*", "app-1"});
  CHECK(a.transports == std::vector<Transport>{Transport::tcp, Transport::kafka});
  CHECK(a.max_unknown_ns == 30'000'000'000);
  CHECK(a.min_spans == 20);
  CHECK(a.degraded.alertmanager_url == "http://127.0.0.1:9093");
  CHECK(a.degraded.webhook_url == "https://hooks.example/skew");
  CHECK_FALSE(a.degraded.untrusted_spans);
  CHECK(a.line == 2);
  const Policy& d = parsed->policies[1];
  CHECK(d.tenant.empty());
  CHECK(d.transports.empty());
  CHECK_FALSE(d.max_unknown_ns);
  CHECK(d.min_spans == 1);
  CHECK(d.degraded.untrusted_spans);
  CHECK(parsed->find("dashboard") == &parsed->policies[1]);
  CHECK(parsed->find("nope") == nullptr);
}

TEST_CASE("coverage: both ends match a glob, and the transport is listed") {
  auto parsed = parse_policies("policies:\n  - {name: p, precision: 1ms, domains: [db-*, app-1], transports: tcp}\n");
  REQUIRE(parsed);
  const Policy& p = parsed->policies[0];
  CHECK(p.covers("db-a", "app-1", Transport::tcp));
  CHECK(p.covers("db-a", "db-b", Transport::tcp));
  CHECK_FALSE(p.covers("db-a", "app-2", Transport::tcp));
  CHECK_FALSE(p.covers("web", "db-a", Transport::tcp));
  CHECK_FALSE(p.covers("db-a", "app-1", Transport::kafka));
}

TEST_CASE("bad files are refused whole, naming the line") {
  rejects_at("policies: [", 1, "not YAML");
  rejects_at("", 1, "empty");
  rejects_at("- a\n- b\n", 1, "top level must be a map");
  rejects_at("policy:\n  - name: a\n", 1, "policy is not a known key");
  rejects_at("policies: []\n", 1, "non-empty list");
  rejects_at("policies:\n  - name: a\n    domains: x\n", 2, "no precision");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n", 2, "no domains");
  rejects_at("policies:\n  - precision: 1ms\n    domains: x\n", 2, "no name");
  rejects_at("policies:\n  - name: a\n    precision: 1\n    domains: x\n", 3, "precision");
  rejects_at("policies:\n  - name: a\n    precision: 0ms\n    domains: x\n", 3, "greater than 0");
  rejects_at("policies:\n  - name: a\n    precision: -1ms\n    domains: x\n", 3, "greater than 0");
  rejects_at("policies:\n  - name: a\n    precision: [1ms]\n    domains: x\n", 3, "single value");
  rejects_at("policies:\n  - name: a b\n    precision: 1ms\n    domains: x\n", 2, "name 'a b'");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: []\n", 4, "non-empty list");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    transports: [tcp, udp]\n", 5,
             "unknown transport 'udp'");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    min_spans: 0\n", 5, "min_spans");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    min_spans: ten\n", 5, "min_spans");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    max_unknown: soon\n", 5, "max_unknown");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    precison: 2ms\n", 5,
             "precison is not a known key");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    degraded:\n      webhook: ftp://h/\n", 6,
             "http:// or https://");
  rejects_at(
      "policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    degraded:\n      untrusted_spans: maybe\n", 6,
      "true or false");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    degraded:\n      pager: x\n", 6,
             "degraded.pager");
  rejects_at(
      "policies:\n  - name: a\n    precision: 1ms\n    domains: x\n  - name: a\n    precision: 2ms\n    domains: y\n",
      5, "used twice");
  rejects_at("policies:\n  - name: a\n    tenant: t/1\n    precision: 1ms\n    domains: x\n", 3, "tenant");
  rejects_at("policies:\n  - name: a\n    precision: 1ms\n    domains: x\n    precision: 2ms\n", 5,
             "precision is given twice");
  rejects_at("policies:\n  - {name: a, precision: 1ms, domains: x, name: b}\n", 2, "name is given twice");
}

TEST_CASE("the number of policies is bounded: they are metric labels") {
  std::string yaml = "policies:\n";
  for (std::size_t i = 0; i <= kMaxPolicies; ++i)
    yaml += "  - {name: p" + std::to_string(i) + ", precision: 1ms, domains: x}\n";
  rejects_at(yaml.c_str(), 2, "at most 64 policies");
}
