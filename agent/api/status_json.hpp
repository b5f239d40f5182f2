// GET /api/v1/status and `skewscope status --json`: the JSON of ../shared/DESIGN.md.
#pragma once

#include <nlohmann/json.hpp>

#include "health/agent_report.hpp"

namespace skewscope {

nlohmann::json status_json(const AgentReport& report);

// Halves lost for any counted reason (what `capture.lost` reports).
std::uint64_t total_lost(const AgentReport& report);

}  // namespace skewscope
