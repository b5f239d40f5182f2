#include <doctest/doctest.h>

#include "domains/tenant_map.hpp"

using namespace skewscope;

namespace {
Result<TenantMap> make(std::vector<TenantSpec> specs) { return TenantMap::create(std::move(specs)); }
}  // namespace

TEST_CASE("--tenant NAME=GLOB,... splits into a name and its globs") {
  auto spec = parse_tenant_flag("payments=db-*,ledger");
  REQUIRE(spec);
  CHECK(spec->name == "payments");
  CHECK(spec->globs == std::vector<std::string>{"db-*", "ledger"});
  CHECK_FALSE(parse_tenant_flag("payments"));
  auto empty_glob = parse_tenant_flag("payments=db-*,");
  REQUIRE(empty_glob);  // refused by the map, which names the tenant
  CHECK_FALSE(make({*empty_glob}));
}

TEST_CASE("a domain belongs to the one tenant whose globs match it, or to none") {
  auto map = make({{"a", {"a?", "shared-a"}}, {"b", {"b*"}}});
  REQUIRE(map);
  CHECK(map->tenant_of("a1") == "a");
  CHECK(map->tenant_of("shared-a") == "a");
  CHECK(map->tenant_of("b-long-name") == "b");
  CHECK_FALSE(map->tenant_of("a12"));    // ? is exactly one character
  CHECK_FALSE(map->tenant_of("infra"));  // operator-only
  CHECK(map->contains("a", "a1"));
  CHECK_FALSE(map->contains("b", "a1"));
  CHECK_FALSE(map->contains("nosuch", "a1"));
  CHECK(map->find("b") != nullptr);
  CHECK(map->find("c") == nullptr);
}

TEST_CASE("bad tenants are refused with a message that names the problem") {
  auto error_of = [](std::vector<TenantSpec> specs) {
    auto map = make(std::move(specs));
    REQUIRE_FALSE(map);
    return map.error;
  };
  CHECK(error_of({{"", {"x"}}}).find("tenant name ''") != std::string::npos);
  CHECK(error_of({{"bad name", {"x"}}}).find("must be 1-63") != std::string::npos);
  CHECK(error_of({{"a", {"x"}}, {"a", {"y"}}}).find("declared twice") != std::string::npos);
  CHECK(error_of({{"a", {}}}).find("names no domain") != std::string::npos);
  CHECK(error_of({{"a", {""}}}).find("empty domain glob") != std::string::npos);
  CHECK(error_of({{"a", {"db-[ab"}}}).find("unclosed") != std::string::npos);
  const std::string overlap = error_of({{"a", {"db-*"}}, {"b", {"*-prod"}}});
  CHECK(overlap.find("'a' and 'b' overlap") != std::string::npos);
  CHECK(overlap.find("'db-*'") != std::string::npos);
  CHECK(overlap.find("'*-prod'") != std::string::npos);
}

TEST_CASE("glob overlap is exact: some name must match both") {
  CHECK(globs_overlap("db-*", "*-prod"));  // db-prod
  CHECK(globs_overlap("a?", "*1"));        // a1
  CHECK(globs_overlap("x", "x"));
  CHECK(globs_overlap("*", "anything"));
  CHECK_FALSE(globs_overlap("a*", "b*"));
  CHECK_FALSE(globs_overlap("a?", "a"));
  CHECK_FALSE(globs_overlap("[ab]x", "cx"));
  CHECK(globs_overlap("[a-c]x", "bx"));
  CHECK_FALSE(globs_overlap("[!a]x", "ax"));
  CHECK(globs_overlap("[!a]x", "?x"));
  CHECK_FALSE(globs_overlap("a\\*", "ab"));  // an escaped star is a literal '*'
  CHECK(globs_overlap("a\\*", "a*"));
  CHECK_FALSE(globs_overlap("pod-a-*", "pod-b-*"));
  // Tenants of disjoint prefixes are accepted.
  auto map = make({{"one", {"pod-a-*"}}, {"two", {"pod-b-*"}}});
  REQUIRE(map);
}
