// The agent's side of --policy-file without threads: loads, reloads that keep the policies in
// force when the file is bad, and the spans' trusted flag from the newest evaluation.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "runtime/policy_runtime.hpp"

using namespace skewscope;

namespace {

struct TempFile {
  std::string path;
  TempFile() {
    char name[] = "/tmp/skewscope-policy-test.XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
  }
  ~TempFile() { unlink(path.c_str()); }
  void write(const std::string& text) const { std::ofstream(path, std::ios::trunc) << text; }
};

const char* kTwoPolicies = R"(policies:
  - name: flagging
    precision: 1ms
    domains: [a, b]
  - name: quiet
    precision: 1us
    domains: [a, b]
    degraded: {untrusted_spans: false}
)";

AgentReport report_with_pair(std::uint64_t negative_spans) {
  AgentReport r;
  r.domain_names = {"host", "a", "b", "c"};
  r.domain_clocks.resize(4);
  PairReport p;
  p.key = {1, 2, Transport::tcp};
  p.window.spans = 100;
  p.window.negative_spans = negative_spans;
  p.unknown_reason = UnknownReason::none;
  r.health.pairs = {p};
  estimate::PairEstimate e;
  e.src = 1;
  e.dst = 2;
  e.lower_ns = -20'000;
  e.upper_ns = 30'000;
  r.estimates = {e};
  return r;
}

}  // namespace

TEST_CASE("a bad file at load is an error naming the line; a bad reload keeps the policies in force") {
  TempFile file;
  std::vector<std::string> log;
  auto logger = [&log](const std::string& line) { log.push_back(line); };
  file.write("policies:\n  - name: a\n    precision: soon\n    domains: x\n");
  auto bad = PolicyRuntime::load(file.path, logger);
  REQUIRE_FALSE(bad);
  CHECK(bad.error.find(": line 3: precision") != std::string::npos);

  file.write(kTwoPolicies);
  auto loaded = PolicyRuntime::load(file.path, logger);
  REQUIRE(loaded);
  PolicyRuntime& runtime = **loaded;
  file.write("policies: [");
  CHECK_FALSE(runtime.reload());
  auto json = runtime.policies_json(0);
  CHECK(json["policies"].size() == 2);
  CHECK(json["file"]["loads"] == 1);
  CHECK(json["file"]["rejected"] == 1);
  CHECK(json["file"]["last_error"].get<std::string>().find("line 1: not YAML") != std::string::npos);
  CHECK(log.back().find("the 2 policies before stay in force") != std::string::npos);

  file.write("policies:\n  - name: flagging\n    precision: 2ms\n    domains: [a, b]\n");
  CHECK(runtime.reload());
  json = runtime.policies_json(0);
  CHECK(json["policies"].size() == 1);
  CHECK(json["file"]["last_error"].is_null());
  std::string metrics;
  runtime.append_metrics(metrics);
  CHECK(metrics.find("skewscope_policy_file_loads_total{result=\"accepted\"} 2\n") != std::string::npos);
  CHECK(metrics.find("skewscope_policy_file_loads_total{result=\"rejected\"} 1\n") != std::string::npos);
}

TEST_CASE("trusted: only policies that flag spans decide, from their newest verdict on the pair") {
  TempFile file;
  file.write(kTwoPolicies);
  auto loaded = PolicyRuntime::load(file.path, [](const std::string&) {});
  REQUIRE(loaded);
  PolicyRuntime& runtime = **loaded;
  // Not evaluated yet: no verdict on the pair, so not trusted.
  CHECK(runtime.trusted("a", "b", Transport::tcp) == false);
  // `quiet` is unknown (1us is finer than the bound) but does not flag spans: trusted.
  runtime.evaluate(report_with_pair(0), 1'000'000'000);
  CHECK(runtime.trusted("a", "b", Transport::tcp) == true);
  CHECK(runtime.trusted("b", "a", Transport::tcp) == true);
  CHECK_FALSE(runtime.trusted("a", "c", Transport::tcp).has_value());  // no policy covers it
  runtime.evaluate(report_with_pair(3), 2'000'000'000);
  CHECK(runtime.trusted("a", "b", Transport::tcp) == false);
  std::string metrics;
  runtime.append_metrics(metrics);
  CHECK(metrics.find("skewscope_policy_met{policy=\"flagging\",tenant=\"\"} 0\n") != std::string::npos);
  CHECK(metrics.find("skewscope_policy_verdict{policy=\"flagging\",tenant=\"\",verdict=\"violated\"} 1\n") !=
        std::string::npos);
}
