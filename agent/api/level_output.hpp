// The timestamp levels in the outputs: per pair in the status JSON (`timestamp_source`, `levels`),
// the `wire` section, and the {timestamp_source} metric families.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/agent_report.hpp"

namespace skewscope {

class PrometheusWriter;

// {"timestamp_source": the level the pair's health uses, "levels": [one entry per level]}.
nlohmann::json level_fields(const AgentReport& r, const PairReport& pair);
// The status JSON's "wire": null without --wire-timestamps.
nlohmann::json wire_json(const AgentReport& r);
void append_level_metrics(PrometheusWriter& w, const AgentReport& r);

}  // namespace skewscope
