// The policy file's tenants: section and policies bound to a tenant (docs/tenants.md).
#include <doctest/doctest.h>

#include "policy/policy_spec.hpp"

using namespace skewscope;
using namespace skewscope::policy;

TEST_CASE("the tenants: section declares tenants, and a tenant's policy covers its own pairs only") {
  auto parsed = parse_policies(R"(tenants:
  a: [a-*]
  b: b-*
policies:
  - name: everyone
    tenant: a
    precision: 1ms
    domains: "*"
  - name: untagged
    precision: 1ms
    domains: "*"
)");
  REQUIRE(parsed);
  CHECK(parsed->tenants.tenants().size() == 2);
  CHECK(parsed->tenants.tenant_of("b-1") == "b");
  const Policy& a = parsed->policies[0];
  CHECK(a.covers("a-1", "a-2", Transport::tcp));
  CHECK_FALSE(a.covers("a-1", "b-1", Transport::tcp));  // its domains say "*", its tenant does not
  CHECK_FALSE(a.covers("b-1", "b-2", Transport::tcp));
  CHECK(parsed->policies[1].covers("a-1", "b-1", Transport::tcp));  // no tenant: an operator's policy
}

TEST_CASE("bad tenants in the policy file are refused with their line") {
  auto error_of = [](const char* yaml) {
    auto parsed = parse_policies(yaml);
    REQUIRE_FALSE(parsed);
    return parsed.error;
  };
  const char* policies = "policies:\n  - name: p\n    tenant: c\n    precision: 1ms\n    domains: \"*\"\n";
  CHECK(error_of((std::string("tenants:\n  a: [x*]\n") + policies).c_str()) ==
        "line 4: policy 'p' names tenant 'c', which is not declared");
  CHECK(error_of((std::string("tenants:\n  a: [x*]\n  b: [\"*y\"]\n") + policies).c_str())
            .rfind("line 2: tenants: ", 0) == 0);
  CHECK(error_of((std::string("tenants:\n  a: []\n") + policies).c_str()).rfind("line 2:", 0) == 0);
  CHECK(error_of((std::string("tenants: [a]\n") + policies).c_str()).find("map of tenant names") != std::string::npos);
  CHECK(error_of((std::string("tenants:\n  \"\": [x]\n") + policies).c_str()).find("tenant name ''") !=
        std::string::npos);
  // Without tenants declared anywhere, a policy's tenant stays a label and binds nothing.
  auto label_only = parse_policies(policies);
  REQUIRE(label_only);
  CHECK(label_only->policies[0].tenant_globs.empty());
  // With --tenant's map instead, the same binding applies.
  auto map = TenantMap::create({{"c", {"c-*"}}});
  REQUIRE(map);
  REQUIRE(bind_policy_tenants(*label_only.value, *map));
  CHECK_FALSE(label_only->policies[0].covers("x", "y", Transport::tcp));
  CHECK(label_only->policies[0].covers("c-1", "c-2", Transport::tcp));
  auto other = TenantMap::create({{"d", {"d-*"}}});
  REQUIRE(other);
  CHECK(bind_policy_tenants(*label_only.value, *other).error ==
        "line 2: policy 'p' names tenant 'c', which is not declared");
}
