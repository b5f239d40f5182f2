// Asking agents for their /api/v1/status: one agent, or several at once. Used by `skewscope
// status|top --agent ...` and by the live page's poll of its --peer-agent peers, so both see an
// agent's answer, and its failure, the same way.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "client/agent_client.hpp"
#include "client/status_merge.hpp"

namespace skewscope {

// The agent's parsed status, or why there is none (unreachable, an HTTP error, not a JSON object).
AgentStatus fetch_status(AgentClient& agent, int timeout_seconds);

// Every agent's status, in the given order, all asked at once: one slow or dead agent costs one
// timeout, not one per agent.
std::vector<AgentStatus> fetch_statuses(const std::vector<std::unique_ptr<AgentClient>>& agents, int timeout_seconds);

// The merged view of several agents' statuses (merge_statuses) with the diagnosis triangulated
// again over every agent's pairs (add_merged_diagnosis): what `status --agent A --agent B` shows
// and what the page's /api/v1/merged serves.
nlohmann::json merged_view(const std::vector<AgentStatus>& statuses);

}  // namespace skewscope
