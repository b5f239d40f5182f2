// The capture families' state (capture/family_status.hpp) in the outputs: /api/v1/status's
// capture_families object and /metrics' skewscope_capture_family_up.
#pragma once

#include <nlohmann/json.hpp>

#include "capture/family_status.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {

nlohmann::json capture_families_json(const FamilyStatuses& families);
// One series per family, every family always (a family that is not requested is 0 with reason
// not_requested), labels {family, reason} from bounded sets.
void append_family_metrics(PrometheusWriter& w, const FamilyStatuses& families);

}  // namespace skewscope
