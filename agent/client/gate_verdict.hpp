// `skewscope gate`'s verdict over several agents, from what each answered for one policy (pure:
// the command fetches, this decides). Exit codes: 0 met on every agent, 1 violated on one, 3 an
// agent unreachable (no answer, TLS or credentials refused: no verdict either way), 4 unknown.
// A violation is certain and wins over an agent that did not answer; an agent without the policy
// is unknown (it cannot vouch for it). Nothing but every agent saying met is met.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace skewscope {

enum class GateExit : int { met = 0, violated = 1, unreachable = 3, unknown = 4 };

struct GateAnswer {
  std::string agent;                   // URL without credentials
  std::optional<nlohmann::json> body;  // the agent's /api/v1/policies?policy=NAME, when it answered 200
  bool unreachable = false;
  std::string error;  // why there is no body
};

struct GateResult {
  GateExit exit = GateExit::unknown;
  std::vector<std::string> lines;  // one per agent, for the operator
};

GateResult decide_gate(const std::string& policy, const std::vector<GateAnswer>& answers);

}  // namespace skewscope
