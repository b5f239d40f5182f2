// The domains stage's parsers and registry: durations, --domain specs, clock simulations, which
// domain a half belongs to.
#include <doctest/doctest.h>

#include "domains/domain_registry.hpp"
#include "domains/domain_spec.hpp"
#include "domains/duration.hpp"

using namespace skewscope;

TEST_CASE("durations") {
  CHECK(*parse_duration_ns("5ms") == 5'000'000);
  CHECK(*parse_duration_ns("250us") == 250'000);
  CHECK(*parse_duration_ns("30s") == 30'000'000'000);
  CHECK(*parse_duration_ns("-2ms") == -2'000'000);
  CHECK(*parse_duration_ns("+1.5ms") == 1'500'000);
  CHECK(*parse_duration_ns("100ns") == 100);
  CHECK(*parse_duration_ns("2m") == 120'000'000'000);
  CHECK(*parse_duration_ns("0s") == 0);
  // A bare zero needs no unit, like Go's ParseDuration; any other bare number still does.
  CHECK(*parse_duration_ns("0") == 0);
  CHECK(*parse_duration_ns("+0") == 0);
  CHECK(*parse_duration_ns("-0") == 0);
  CHECK_FALSE(parse_duration_ns("00"));
  CHECK_FALSE(parse_duration_ns("0.0"));
  CHECK_FALSE(parse_duration_ns("1"));
  for (const char* bad : {"", "5", "ms", "5 ms", "5xs", "--5ms", "5ms5", "1e400s", "nans", "infs", "-"}) {
    INFO(bad);
    auto p = parse_duration_ns(bad);
    CHECK_FALSE(p);
    CHECK_FALSE(p.error.empty());
  }
  CHECK(format_duration_ns(5'000'000) == "5ms");
  CHECK(format_duration_ns(-250'000) == "-250us");
  CHECK(format_duration_ns(1'500'000) == "1.500ms");
  CHECK(format_duration_ns(42) == "42ns");
}

TEST_CASE("domain specs") {
  auto a = parse_domain_spec("infer=netns:/run/netns/lab-h3");
  REQUIRE(a);
  CHECK(a->name == "infer");
  CHECK(a->kind == DomainSpec::Kind::netns);
  CHECK(a->path == "/run/netns/lab-h3");
  auto b = parse_domain_spec("pre=cgroup:/sys/fs/cgroup/unified/pre");
  REQUIRE(b);
  CHECK(b->kind == DomainSpec::Kind::cgroup);
  for (const char* bad : {"infer", "=netns:/x", "infer=netns:", "infer=netns:relative", "infer=pid:/x",
                          "in fer=netns:/x", "a\"b=netns:/x"}) {
    INFO(bad);
    CHECK_FALSE(parse_domain_spec(bad));
  }
}

TEST_CASE("clock simulations") {
  auto a = parse_clock_simulation("infer=+5ms");
  REQUIRE(a);
  CHECK(a->offset_ns == 5'000'000);
  CHECK(a->drift_ppm == 0);
  auto b = parse_clock_simulation("infer=-250us,+20ppm");
  REQUIRE(b);
  CHECK(b->offset_ns == -250'000);
  CHECK(b->drift_ppm == doctest::Approx(20));
  auto c = parse_clock_simulation("x=0s,-3.5ppm");
  REQUIRE(c);
  CHECK(c->drift_ppm == doctest::Approx(-3.5));
  for (const char* bad : {"infer", "infer=5", "infer=5ms,20", "infer=5ms,ppm", "infer=5ms,xppm", "=5ms"}) {
    INFO(bad);
    CHECK_FALSE(parse_clock_simulation(bad));
  }
}

TEST_CASE("clock simulations are bounded: offsets within ±24h, drift within ±1000ppm") {
  auto zero = parse_clock_simulation("b=0");
  REQUIRE(zero);
  CHECK(zero->offset_ns == 0);
  CHECK(parse_clock_simulation("b=0,+5ppm")->drift_ppm == doctest::Approx(5));
  CHECK(parse_clock_simulation("h=24h")->offset_ns == kMaxSimulatedOffsetNs);
  CHECK(parse_clock_simulation("h=-24h")->offset_ns == -kMaxSimulatedOffsetNs);
  CHECK(parse_clock_simulation("h=0,-1000ppm")->drift_ppm == doctest::Approx(-1000));
  for (const char* bad : {"h=2555555h", "h=-2555555h", "h=24h1ns", "h=86400.001s", "h=0,1001ppm", "h=0,-1e9ppm",
                          "h=0,nanppm", "h=0,infppm"}) {
    INFO(bad);
    auto p = parse_clock_simulation(bad);
    CHECK_FALSE(p);
    CHECK_FALSE(p.error.empty());
  }
  CHECK(parse_clock_simulation("h=2555555h").error.find("out of range") != std::string::npos);
  CHECK(parse_clock_simulation("h=0,2000ppm").error.find("out of range") != std::string::npos);
}

TEST_CASE("domain registry resolves real paths and rejects others") {
  auto ok = DomainRegistry::from_specs({{"self", DomainSpec::Kind::netns, "/proc/self/ns/net"}}, "host", false);
  REQUIRE(ok);
  CHECK(ok->size() == 2);
  auto missing =
      DomainRegistry::from_specs({{"x", DomainSpec::Kind::netns, "/run/netns/does-not-exist-42"}}, "h", false);
  CHECK_FALSE(missing);
  CHECK(missing.error.find("does-not-exist-42") != std::string::npos);
  auto not_ns = DomainRegistry::from_specs({{"x", DomainSpec::Kind::netns, "/tmp"}}, "h", false);
  CHECK_FALSE(not_ns);
  auto not_cgroup = DomainRegistry::from_specs({{"x", DomainSpec::Kind::cgroup, "/tmp"}}, "h", false);
  CHECK_FALSE(not_cgroup);
  auto twice = DomainRegistry::from_specs(
      {{"a", DomainSpec::Kind::netns, "/proc/self/ns/net"}, {"b", DomainSpec::Kind::netns, "/proc/self/ns/net"}}, "h",
      false);
  CHECK_FALSE(twice);
}

TEST_CASE("classification: cgroup before netns before host; only-domains drops the rest") {
  DomainRegistry r("host", false);
  REQUIRE(r.add_netns("a", 11));
  REQUIRE(r.add_cgroup("b", 99));
  CHECK_FALSE(r.add_netns("a", 12));  // name taken
  CHECK(r.classify(11, 1) == r.find("a"));
  CHECK(r.classify(11, 99) == r.find("b"));
  CHECK(r.classify(12, 1) == DomainId{0});
  DomainRegistry only("host", true);
  REQUIRE(only.add_netns("a", 11));
  CHECK_FALSE(only.classify(12, 1));
}
