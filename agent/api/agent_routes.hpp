// The agent's read-only analysis endpoints beyond the contract's status and metrics:
//   GET /api/v1/whatif?clock_error=gaussian:1ms|laplace:250us[&format=text]
//   GET /api/v1/spans?limit=N        recent spans, raw timestamps plus flagged, capped corrections;
//                                    only with spans_enabled (--enable-spans-api), else 404
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "api/http_api.hpp"
#include "core/shared_core.hpp"

namespace skewscope {

// Whether the spans of a pair may be trusted (--policy-file: false while a policy covering the pair
// is not met); nullopt: no policy says, and the span carries no `trusted` field.
using SpanTrust = std::function<std::optional<bool>(const std::string& src, const std::string& dst, Transport)>;

void add_analysis_routes(HttpApi& api, SharedCore& shared, bool spans_enabled, SpanTrust trusted = {});

}  // namespace skewscope
