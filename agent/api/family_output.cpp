#include "api/family_output.hpp"

namespace skewscope {

nlohmann::json capture_families_json(const FamilyStatuses& families) {
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < static_cast<int>(CaptureFamily::count_); ++i) {
    const auto f = static_cast<CaptureFamily>(i);
    const FamilyStatus& s = status_of(families, f);
    out[family_name(f)] = {{"up", s.up},
                           {"reason", family_reason_name(s.reason)},
                           {"variant", s.variant.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.variant)},
                           {"detail", s.detail}};
  }
  return out;
}

void append_family_metrics(PrometheusWriter& w, const FamilyStatuses& families) {
  w.family("skewscope_capture_family_up", "gauge",
           "1 when the capture family runs; 0 with the reason it does not (not_requested, kernel_lacks_feature, "
           "load_failed). The TCP family is mandatory.");
  for (int i = 0; i < static_cast<int>(CaptureFamily::count_); ++i) {
    const auto f = static_cast<CaptureFamily>(i);
    const FamilyStatus& s = status_of(families, f);
    w.sample("skewscope_capture_family_up", {{"family", family_name(f)}, {"reason", family_reason_name(s.reason)}},
             s.up ? 1 : 0);
  }
}

}  // namespace skewscope
