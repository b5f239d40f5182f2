// The payload capture's part of the outputs (--payload-bytes): the `payload` object of the status
// JSON and the skewscope_payload_* / skewscope_message_* metric families.
#pragma once

#include <nlohmann/json.hpp>

#include "api/prometheus_writer.hpp"
#include "core/agent_report.hpp"

namespace skewscope {

nlohmann::json payload_json(const PayloadReport& p);
void append_payload_metrics(PrometheusWriter& w, const PayloadReport& p);

}  // namespace skewscope
