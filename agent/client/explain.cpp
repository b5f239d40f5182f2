#include "client/explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "api/diagnosis_output.hpp"
#include "diagnose/engine.hpp"

namespace skewscope {

namespace {
using nlohmann::json;

std::string amount_text(diagnose::Cause cause, double amount) {
  if (cause == diagnose::Cause::clock_drift) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f ppm", amount);
    return buf;
  }
  return diagnose::format_ns(amount);
}

std::string tolerance_text(diagnose::Cause cause, double tolerance) {
  return "±" + amount_text(cause, std::abs(tolerance)).substr(1);
}

std::string age_text(const std::optional<double>& age) {
  if (!age) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " %.0f s ago", std::max(0.0, *age));
  return buf;
}

std::string what_happened(const diagnose::PairDiagnosis& d) {
  switch (d.cause) {
    case diagnose::Cause::clock_step: return "stepped";
    case diagnose::Cause::clock_drift: return "drifts";
    case diagnose::Cause::ptp_lost: return "lost its PTP sync";
    case diagnose::Cause::clock_source_disagrees: return "is off by more than its source claims";
    default: return diagnose::cause_name(d.cause);
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}
}  // namespace

Result<diagnose::DiagnosisReport> diagnosis_from_statuses(const std::vector<json>& statuses) {
  using R = Result<diagnose::DiagnosisReport>;
  std::map<std::pair<std::string, std::string>, diagnose::PairDiagnosis> by_pair;  // unordered: (min, max)
  std::map<std::string, std::string> clock_lines;
  for (const auto& status : statuses) {
    if (!status.is_object()) continue;
    if (status.contains("hosts") && status["hosts"].is_array())
      for (const auto& h : status["hosts"])
        if (h.is_object() && h.contains("host") && h["host"].is_string() && h.contains("clock") &&
            h["clock"].is_string() && h["clock"].get<std::string>() != "no clock readings")
          clock_lines.try_emplace(h["host"].get<std::string>(), h["clock"].get<std::string>());
    if (!status.contains("pairs") || !status["pairs"].is_array()) continue;
    for (const auto& p : status["pairs"]) {
      if (!p.is_object() || !p.contains("diagnosis") || p["diagnosis"].is_null()) continue;
      if (!p.contains("src") || !p["src"].is_string() || !p.contains("dst") || !p["dst"].is_string())
        return R::fail("a pair with a diagnosis has no src or dst");
      const auto src = p["src"].get<std::string>(), dst = p["dst"].get<std::string>();
      auto parsed = pair_diagnosis_from_json(p["diagnosis"], src, dst);
      if (!parsed) return R::fail(parsed.error);
      // Kept in the orientation the agent reported (its evidence line speaks of it).
      diagnose::PairDiagnosis d = std::move(*parsed);
      auto [it, fresh] = by_pair.try_emplace({std::min(src, dst), std::max(src, dst)}, d);
      if (!fresh && d.incident() && !it->second.incident()) it->second = d;
    }
  }
  std::vector<diagnose::PairDiagnosis> pairs;
  for (auto& [key, d] : by_pair) pairs.push_back(std::move(d));
  diagnose::DiagnosisReport report = diagnose::combine(std::move(pairs), {}, diagnose::Config{});
  for (auto& h : report.hosts)
    if (auto it = clock_lines.find(h.host); it != clock_lines.end()) h.clock = it->second;
  return R::ok(std::move(report));
}

std::string explain_text(const diagnose::DiagnosisReport& report) {
  if (report.incidents == 0) {
    std::size_t undetermined = 0;
    for (const auto& p : report.pairs) undetermined += p.cause == diagnose::Cause::undetermined;
    return "No incident: " + std::to_string(report.pairs.size()) + " pair(s) diagnosed" +
           (undetermined ? ", " + std::to_string(undetermined) + " without enough evidence to call them healthy" : "") +
           ".\n";
  }
  std::string out;
  std::set<std::string> explained;  // pairs told in a culprit's paragraph
  for (const auto& h : report.hosts) {
    if (!h.culprit) continue;
    const diagnose::PairDiagnosis* first = nullptr;
    std::vector<std::string> moved, consistent;
    for (const auto& p : report.pairs) {
      if (p.culprit && *p.culprit == h.host && p.cause == h.cause) {
        if (!first || p.confidence > first->confidence) first = &p;
        moved.push_back(p.src + "→" + p.dst);
        explained.insert(p.src + "→" + p.dst);
      } else if (p.src != h.host && p.dst != h.host && p.cause == diagnose::Cause::none) {
        consistent.push_back(p.src + "→" + p.dst);
      }
    }
    if (!first) continue;
    out += h.host + "'s clock " + what_happened(*first);
    if (h.amount) out += " " + amount_text(h.cause, *h.amount);
    if (first->tolerance) out += " " + tolerance_text(h.cause, *first->tolerance);
    out += age_text(first->age_seconds);
    out += " (" + std::string(diagnose::cause_name(h.cause)) + ", confidence " +
           std::to_string(static_cast<int>(std::lround(h.confidence * 100))) + "%); ";
    out += join(moved) + " moved";
    if (!consistent.empty()) out += ", " + join(consistent) + " consistent";
    out += ". " + h.host + ": " + h.clock;
    if (h.cause != diagnose::Cause::ptp_lost && h.clock.find("synchronized") != std::string::npos)
      out += " — its clock source did not see it";
    out += ". Evidence: " + first->evidence + ".\n";
  }
  for (const auto& p : report.pairs) {
    if (!p.incident() || explained.contains(p.src + "→" + p.dst)) continue;
    out += p.src + "→" + p.dst + ": " + diagnose::cause_name(p.cause);
    if (p.amount) out += " " + amount_text(p.cause, *p.amount);
    if (p.tolerance) out += " " + tolerance_text(p.cause, *p.tolerance);
    out += age_text(p.age_seconds);
    if (p.culprit) {
      out += "; culprit " + *p.culprit;
    } else if (!p.culprit_candidates.empty()) {
      std::string names;
      for (const auto& c : p.culprit_candidates) names += (names.empty() ? "" : " or ") + c;
      out += "; culprit not yet known: " + names;
    } else {
      out += "; culprit undetermined";
    }
    if (!p.culprit_note.empty()) out += " (" + p.culprit_note + ")";
    out += ". Evidence: " + p.evidence + ".\n";
  }
  return out;
}

json explain_json(const diagnose::DiagnosisReport& report) {
  json pairs = json::array();
  for (const auto& p : report.pairs)
    if (p.incident()) {
      json j = pair_diagnosis_json(p);
      j["src"] = p.src;
      j["dst"] = p.dst;
      pairs.push_back(std::move(j));
    }
  return {{"incidents", report.incidents}, {"pairs", pairs}, {"hosts", hosts_json(report)}};
}

}  // namespace skewscope
