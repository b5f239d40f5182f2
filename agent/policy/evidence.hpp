// The evidence a policy is judged on, read from the agent's report: one entry per unordered pair
// of domains and transport that the policy covers and that has a pair report (traffic in the
// window, or a last span still remembered).
#pragma once

#include <vector>

#include "core/agent_report.hpp"
#include "policy/policy_spec.hpp"
#include "policy/verdict.hpp"

namespace skewscope::policy {

std::vector<PairEvidence> covered_evidence(const Policy& policy, const AgentReport& report);

}  // namespace skewscope::policy
