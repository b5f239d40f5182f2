// Renderings of the policies' verdicts: GET /api/v1/policies (every verdict with its evidence)
// and the policy families of /metrics (docs/contract.md, "Policies").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/policy_tracker.hpp"

namespace skewscope::policy {

// Where the policies came from and what became of the file's loads.
struct PolicyFileStatus {
  std::string path;
  std::uint64_t loads = 0;                // accepted (the first load included)
  std::uint64_t rejected = 0;             // refused: the policies before stayed in force
  std::optional<std::string> last_error;  // the newest refusal's message, until a load is accepted
};

nlohmann::json policy_state_json(const PolicyState& state, std::int64_t now_ns);
nlohmann::json policies_json(const std::vector<PolicyState>& states, const PolicyFileStatus& file, std::int64_t now_ns);
void append_policy_metrics(std::string& out, const std::vector<PolicyState>& states, const PolicyFileStatus& file);

}  // namespace skewscope::policy
