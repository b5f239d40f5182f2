#include "api/diagnosis_output.hpp"

#include <cmath>

#include "diagnose/engine.hpp"

namespace skewscope {

namespace {
using nlohmann::json;

// Amounts are kept in ns (steps, offsets) or ppm (slopes); the JSON speaks seconds or ppm.
double to_unit(diagnose::Cause c, double v) { return c == diagnose::Cause::clock_drift ? v : v * 1e-9; }
double from_unit(diagnose::Cause c, double v) { return c == diagnose::Cause::clock_drift ? v : v * 1e9; }

json measure_json(const std::optional<diagnose::Measure>& m, double scale) {
  if (!m) return nullptr;
  return json::array({m->value * scale, m->tolerance * scale});
}

Result<std::optional<diagnose::Measure>> measure_from_json(const json& j, const char* key, double scale) {
  using R = Result<std::optional<diagnose::Measure>>;
  if (!j.contains(key) || j[key].is_null()) return R::ok(std::nullopt);
  const json& m = j[key];
  if (!m.is_array() || m.size() != 2 || !m[0].is_number() || !m[1].is_number())
    return R::fail(std::string("diagnosis.measures.") + key + " is not [value, tolerance]");
  const double v = m[0].get<double>() / scale, t = m[1].get<double>() / scale;
  if (!std::isfinite(v) || !std::isfinite(t) || t < 0)
    return R::fail(std::string("diagnosis.measures.") + key + " holds a non-finite value or a negative tolerance");
  return R::ok(diagnose::Measure{v, t});
}

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json pair_diagnosis_json(const diagnose::PairDiagnosis& d) {
  return {{"cause", diagnose::cause_name(d.cause)},
          {"incident", d.incident()},
          {"culprit", d.culprit ? json(*d.culprit) : json(nullptr)},
          {"culprit_note", d.culprit_note},
          {"culprit_candidates", d.culprit_candidates},
          {"amount", d.amount ? json(to_unit(d.cause, *d.amount)) : json(nullptr)},
          {"tolerance", d.tolerance ? json(to_unit(d.cause, *d.tolerance)) : json(nullptr)},
          {"unit", d.amount ? json(diagnose::amount_unit(d.cause)) : json(nullptr)},
          {"age_seconds", optional_number(d.age_seconds)},
          {"confidence", d.confidence},
          {"evidence", d.evidence},
          {"measures",
           {{"step_seconds", measure_json(d.step, 1e-9)},
            {"drift_ppm", measure_json(d.drift, 1)},
            {"offset_seconds", measure_json(d.offset, 1e-9)}}}};
}

json pair_diagnosis_json(const diagnose::DiagnosisReport& report, const std::string& src, const std::string& dst) {
  for (const auto& d : report.pairs) {
    if (d.src == src && d.dst == dst) return pair_diagnosis_json(d);
    if (d.src == dst && d.dst == src) return pair_diagnosis_json(diagnose::reversed(d));
  }
  return nullptr;
}

json hosts_json(const diagnose::DiagnosisReport& report) {
  json hosts = json::array();
  for (const auto& h : report.hosts)
    hosts.push_back({{"host", h.host},
                     {"cause", diagnose::cause_name(h.cause)},
                     {"culprit", h.culprit},
                     {"amount", h.amount ? json(to_unit(h.cause, *h.amount)) : json(nullptr)},
                     {"unit", h.amount ? json(diagnose::amount_unit(h.cause)) : json(nullptr)},
                     {"confidence", h.confidence},
                     {"pairs", h.pairs},
                     {"clock", h.clock}});
  return hosts;
}

Result<diagnose::PairDiagnosis> pair_diagnosis_from_json(const json& j, const std::string& src,
                                                         const std::string& dst) {
  using R = Result<diagnose::PairDiagnosis>;
  if (!j.is_object()) return R::fail("diagnosis of " + src + "→" + dst + " is not an object");
  diagnose::PairDiagnosis d;
  d.src = src;
  d.dst = dst;
  if (!j.contains("cause") || !j["cause"].is_string())
    return R::fail("diagnosis of " + src + "→" + dst + " has no cause");
  auto cause = diagnose::cause_from_name(j["cause"].get<std::string>());
  if (!cause) return R::fail("diagnosis of " + src + "→" + dst + ": unknown cause " + j["cause"].dump());
  d.cause = *cause;
  auto number = [&](const char* key) -> std::optional<double> {
    if (j.contains(key) && j[key].is_number() && std::isfinite(j[key].get<double>())) return j[key].get<double>();
    return std::nullopt;
  };
  if (auto v = number("amount")) d.amount = from_unit(d.cause, *v);
  if (auto v = number("tolerance")) d.tolerance = from_unit(d.cause, *v);
  d.age_seconds = number("age_seconds");
  d.confidence = std::clamp(number("confidence").value_or(0), 0.0, 1.0);
  if (j.contains("culprit") && j["culprit"].is_string()) d.culprit = j["culprit"].get<std::string>();
  if (j.contains("culprit_note") && j["culprit_note"].is_string())
    d.culprit_note = j["culprit_note"].get<std::string>();
  if (j.contains("evidence") && j["evidence"].is_string()) d.evidence = j["evidence"].get<std::string>();
  const json measures = j.contains("measures") ? j["measures"] : json::object();
  if (!measures.is_object()) return R::fail("diagnosis of " + src + "→" + dst + ": measures is not an object");
  auto step = measure_from_json(measures, "step_seconds", 1e-9);
  auto drift = measure_from_json(measures, "drift_ppm", 1);
  auto offset = measure_from_json(measures, "offset_seconds", 1e-9);
  for (const auto* m : {&step, &drift, &offset})
    if (!*m) return R::fail("diagnosis of " + src + "→" + dst + ": " + m->error);
  d.step = *step;
  d.drift = *drift;
  d.offset = *offset;
  return R::ok(std::move(d));
}

void append_diagnosis_metrics(PrometheusWriter& w, const diagnose::DiagnosisReport& report) {
  w.family("skewscope_diagnosis", "gauge",
           "Per pair of hosts, 1 for the cause of its current diagnosis and 0 for every other cause "
           "(docs/diagnosis.md).");
  for (const auto& d : report.pairs)
    for (std::size_t i = 0; i < diagnose::kCauseCount; ++i) {
      const auto c = static_cast<diagnose::Cause>(i);
      w.sample("skewscope_diagnosis", {{"src", d.src}, {"dst", d.dst}, {"cause", diagnose::cause_name(c)}},
               d.cause == c ? 1 : 0);
    }
  w.family("skewscope_host_suspect", "gauge",
           "1 when the host's clock is named culprit for that cause (by triangulation, or by its own PTP "
           "client for ptp_lost); one series per host and each cause that can name one.");
  for (const auto& h : report.hosts)
    for (std::size_t i = 0; i < diagnose::kCauseCount; ++i) {
      const auto c = static_cast<diagnose::Cause>(i);
      if (c != diagnose::Cause::clock_step && c != diagnose::Cause::clock_drift && c != diagnose::Cause::ptp_lost &&
          c != diagnose::Cause::clock_source_disagrees)
        continue;  // the other causes never name a host
      w.sample("skewscope_host_suspect", {{"host", h.host}, {"cause", diagnose::cause_name(c)}},
               h.culprit && h.cause == c ? 1 : 0);
    }
}

}  // namespace skewscope
