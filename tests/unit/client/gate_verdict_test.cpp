#include <doctest/doctest.h>

#include "client/gate_verdict.hpp"

using namespace skewscope;
using nlohmann::json;

namespace {

GateAnswer says(const std::string& agent, const std::string& verdict, const std::string& policy = "deploy") {
  json body = {
      {"policies", json::array({{{"name", policy}, {"verdict", verdict}, {"reason", "r"}, {"pairs", json::array()}}})}};
  return {agent, body, false, ""};
}
GateAnswer unreachable(const std::string& agent) { return {agent, std::nullopt, true, "connection refused"}; }

}  // namespace

TEST_CASE("the gate is met only when every agent says met") {
  CHECK(decide_gate("deploy", {says("a", "met")}).exit == GateExit::met);
  CHECK(decide_gate("deploy", {says("a", "met"), says("b", "met")}).exit == GateExit::met);
  CHECK(decide_gate("deploy", {says("a", "met"), says("b", "unknown")}).exit == GateExit::unknown);
  CHECK(decide_gate("deploy", {}).exit == GateExit::unknown);
}

TEST_CASE("a violation is certain and wins over an agent that did not answer") {
  CHECK(decide_gate("deploy", {says("a", "met"), says("b", "violated")}).exit == GateExit::violated);
  CHECK(decide_gate("deploy", {unreachable("a"), says("b", "violated")}).exit == GateExit::violated);
  CHECK(decide_gate("deploy", {unreachable("a"), says("b", "met")}).exit == GateExit::unreachable);
  CHECK(decide_gate("deploy", {unreachable("a"), says("b", "unknown")}).exit == GateExit::unreachable);
}

TEST_CASE("an agent without the policy, or with an answer the gate cannot read, cannot vouch") {
  auto other = decide_gate("deploy", {says("a", "met", "other")});
  CHECK(other.exit == GateExit::unknown);
  REQUIRE(other.lines.size() == 1);
  CHECK(other.lines[0].find("has no policy named deploy") != std::string::npos);
  CHECK(decide_gate("deploy", {says("a", "excellent")}).exit == GateExit::unknown);
  CHECK(decide_gate("deploy", {{"a", json::array(), false, ""}}).exit == GateExit::unknown);
  CHECK(decide_gate("deploy", {{"a", std::nullopt, false, "no policy named 'deploy'"}}).exit == GateExit::unknown);
}

TEST_CASE("one line per agent says what it answered") {
  auto r = decide_gate("deploy", {says("http://a:1", "met"), unreachable("http://b:2")});
  REQUIRE(r.lines.size() == 2);
  CHECK(r.lines[0] == "agent http://a:1: met (r, 0 pairs)");
  CHECK(r.lines[1] == "agent http://b:2: unreachable: connection refused");
}
