// `skewscope explain`: the diagnosis of one or several agents as one short paragraph per incident.
// Pure over the agents' status JSON, so the merged view is tested without agents: the pairs'
// diagnoses of every agent are triangulated again together (a culprit one agent cannot name from
// its own pairs may be named from all of them).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/diagnosis.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// Every agent's pair diagnoses (each pair of hosts once: the first agent's report of it, unless a
// later one has an incident and it has none), triangulated together. A status without diagnoses
// (an older agent) contributes no pair; a malformed diagnosis is an error naming the pair.
Result<diagnose::DiagnosisReport> diagnosis_from_statuses(const std::vector<nlohmann::json>& statuses);

// One paragraph per culprit host, then one per incident nobody could be blamed for; a line saying
// so when there is no incident.
std::string explain_text(const diagnose::DiagnosisReport& report);
// {"incidents": N, "pairs": [...incident pairs...], "hosts": [...]} in the status JSON's shapes.
nlohmann::json explain_json(const diagnose::DiagnosisReport& report);

}  // namespace skewscope
