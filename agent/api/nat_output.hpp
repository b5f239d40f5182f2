// Address translation's part of the outputs (--nat-conntrack): the `nat` object of the status
// JSON and the skewscope_nat_* metric families.
#pragma once

#include <nlohmann/json.hpp>

#include "core/agent_report.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {

nlohmann::json nat_json(const NatReport& n);
void append_nat_metrics(PrometheusWriter& w, const NatReport& n);

}  // namespace skewscope
