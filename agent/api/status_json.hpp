// GET /api/v1/status and `skewscope status --json`: the contract JSON, plus the capture's
// coverage (capture.up, window_lost_halves, capture_complete) that decides whether health can be 1.
#pragma once

#include <nlohmann/json.hpp>

#include "core/agent_report.hpp"

namespace skewscope {

nlohmann::json status_json(const AgentReport& report);

// Why the overall health is null, for an operator ("unknown: 83% of halves unpaired in the window
// (pre 830 of 1000)"); empty when it is known.
std::string health_reason(const AgentReport& report);

// Halves lost for any counted reason (what `capture.lost` reports).
std::uint64_t total_lost(const AgentReport& report);

}  // namespace skewscope
