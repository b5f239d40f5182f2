// The diagnosis in the status JSON (a `diagnosis` object per pair, the `hosts` section) and in
// /metrics (skewscope_diagnosis, skewscope_host_suspect), and the JSON read back by
// `skewscope explain` to triangulate across several agents. docs/contract.md lists the fields.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/agent_report.hpp"
#include "diagnose/diagnosis.hpp"
#include "skewscope/prometheus_text.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// The pair's diagnosis in the orientation src → dst; null when the report has none for it.
nlohmann::json pair_diagnosis_json(const diagnose::DiagnosisReport& report, const std::string& src,
                                   const std::string& dst);
nlohmann::json pair_diagnosis_json(const diagnose::PairDiagnosis& d);
nlohmann::json hosts_json(const diagnose::DiagnosisReport& report);

// A pair's diagnosis as pair_diagnosis_json wrote it (src and dst from the pair around it).
Result<diagnose::PairDiagnosis> pair_diagnosis_from_json(const nlohmann::json& diagnosis, const std::string& src,
                                                         const std::string& dst);

void append_diagnosis_metrics(PrometheusWriter& w, const diagnose::DiagnosisReport& report);

}  // namespace skewscope
