#include "client/gate_verdict.hpp"

namespace skewscope {
namespace {

// What one agent says of the policy: met, violated or unknown, with a line saying why.
std::pair<GateExit, std::string> agent_verdict(const std::string& policy, const GateAnswer& a) {
  const std::string who = "agent " + a.agent + ": ";
  if (a.unreachable) return {GateExit::unreachable, who + "unreachable: " + a.error};
  if (!a.body) return {GateExit::unknown, who + a.error};
  const nlohmann::json& body = *a.body;
  const nlohmann::json* found = nullptr;
  if (body.is_object() && body.contains("policies") && body["policies"].is_array())
    for (const auto& p : body["policies"])
      if (p.is_object() && p.value("name", "") == policy) found = &p;
  if (found == nullptr) return {GateExit::unknown, who + "has no policy named " + policy};
  const std::string verdict = found->value("verdict", "");
  const std::string reason = found->value("reason", "");
  const auto pairs = found->contains("pairs") && (*found)["pairs"].is_array() ? (*found)["pairs"].size() : 0;
  const std::string line = who + verdict + " (" + reason + ", " + std::to_string(pairs) + " pairs)";
  if (verdict == "met") return {GateExit::met, line};
  if (verdict == "violated") return {GateExit::violated, line};
  return {GateExit::unknown, verdict == "unknown" ? line : who + "answered an unknown verdict '" + verdict + "'"};
}

int rank(GateExit e) {
  switch (e) {
    case GateExit::violated: return 3;
    case GateExit::unreachable: return 2;
    case GateExit::unknown: return 1;
    case GateExit::met: return 0;
  }
  return 1;
}

}  // namespace

GateResult decide_gate(const std::string& policy, const std::vector<GateAnswer>& answers) {
  GateResult out;
  if (answers.empty()) return out;  // no agent vouched: unknown
  out.exit = GateExit::met;
  for (const auto& a : answers) {
    auto [exit, line] = agent_verdict(policy, a);
    out.lines.push_back(std::move(line));
    if (rank(exit) > rank(out.exit)) out.exit = exit;
  }
  return out;
}

}  // namespace skewscope
