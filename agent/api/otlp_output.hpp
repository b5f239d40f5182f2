// The OTLP exporter's part of the outputs (--otlp-endpoint): the `otlp` object of the status
// JSON and the skewscope_otlp_* metric families.
#pragma once

#include <nlohmann/json.hpp>

#include "core/agent_report.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {

nlohmann::json otlp_json(const otlp::OtlpReport& o);
void append_otlp_metrics(PrometheusWriter& w, const otlp::OtlpReport& o);

}  // namespace skewscope
