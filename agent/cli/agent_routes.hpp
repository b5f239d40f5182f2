// The agent's read-only analysis endpoints beyond the contract's status and metrics:
//   GET /api/v1/whatif?clock_error=gaussian:1ms|laplace:250us[&format=text]
//   GET /api/v1/spans?limit=N        recent spans, raw timestamps plus flagged, capped corrections;
//                                    only with spans_enabled (--enable-spans-api), else 404
#pragma once

#include <mutex>

#include "api/http_api.hpp"
#include "core/agent_core.hpp"

namespace skewscope {

void add_analysis_routes(HttpApi& api, AgentCore& core, std::mutex& core_lock, bool spans_enabled);

}  // namespace skewscope
