// /metrics: the contract's families from one AgentReport.
#pragma once

#include <string>

#include "core/agent_report.hpp"

namespace skewscope {

std::string render_agent_metrics(const AgentReport& report, const std::string& version);

}  // namespace skewscope
