// The diagnosis of a merged view (`skewscope status --agent A --agent B ... --json`): each agent
// triangulates only over its own pairs, so the merged view triangulates again over the union
// (diagnosis_from_statuses, the same as `skewscope explain` with several agents): a culprit no
// single agent could name is named, and a host blamed by one agent's partial view is checked
// against the others' pairs.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "client/status_merge.hpp"

namespace skewscope {

// Adds to `merged` (merge_statuses' output) `incidents` and `hosts` as the single-agent status has
// them, and replaces each merged pair's `diagnosis` by the merged one. When an agent's diagnosis is
// malformed, nothing is replaced and `diagnosis_error` says why (the agents' own verdicts stay).
void add_merged_diagnosis(nlohmann::json& merged, const std::vector<AgentStatus>& agents);

}  // namespace skewscope
