#include "client/explain_merged_status.hpp"

#include "api/diagnosis_output.hpp"
#include "client/explain.hpp"

namespace skewscope {

void add_merged_diagnosis(nlohmann::json& merged, const std::vector<AgentStatus>& agents) {
  std::vector<nlohmann::json> statuses;
  for (const auto& a : agents)
    if (a.status) statuses.push_back(*a.status);
  auto report = diagnosis_from_statuses(statuses);
  if (!report) {
    merged["diagnosis_error"] = report.error;
    return;
  }
  merged["incidents"] = report->incidents;
  merged["hosts"] = hosts_json(*report);
  if (!merged.contains("pairs") || !merged["pairs"].is_array()) return;
  for (auto& pair : merged["pairs"]) {
    if (!pair.is_object() || !pair.contains("src") || !pair["src"].is_string() || !pair.contains("dst") ||
        !pair["dst"].is_string())
      continue;
    // Null when no agent diagnosed the pair (an older agent): said so rather than left stale.
    pair["diagnosis"] = pair_diagnosis_json(*report, pair["src"].get<std::string>(), pair["dst"].get<std::string>());
  }
}

}  // namespace skewscope
