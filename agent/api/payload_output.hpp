// The payload capture's part of the outputs (--payload-bytes): the `payload` object of the status
// JSON and the skewscope_payload_* / skewscope_message_* metric families.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/agent_report.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {

// domain_names: indexed by DomainId, to name the domain of a ZMTP stream left unparsed.
nlohmann::json payload_json(const PayloadReport& p, const std::vector<std::string>& domain_names = {});
void append_payload_metrics(PrometheusWriter& w, const PayloadReport& p);

}  // namespace skewscope
