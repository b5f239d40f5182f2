#include "policy/policy_output.hpp"

#include "skewscope/prometheus_text.hpp"

namespace skewscope::policy {
namespace {

using nlohmann::json;

json seconds(std::optional<double> ns) { return ns ? json(*ns * 1e-9) : json(nullptr); }
json seconds(std::optional<std::int64_t> ns) { return ns ? json(static_cast<double>(*ns) * 1e-9) : json(nullptr); }

json pair_json(const PairVerdict& p) {
  const PairEvidence& e = p.evidence;
  return {{"src", e.src},
          {"dst", e.dst},
          {"transport", transport_name(e.transport)},
          {"verdict", verdict_name(p.verdict)},
          {"reason", verdict_reason_name(p.reason)},
          {"spans", e.spans},
          {"negative_spans", e.negative_spans},
          {"window_lost_halves", e.window_lost_halves},
          {"capture_up", e.capture_up},
          {"offset_lower_seconds", seconds(e.lower_ns)},
          {"offset_upper_seconds", seconds(e.upper_ns)},
          {"clock_bound_seconds", seconds(e.clock_bound_ns)},
          {"bound_seconds", seconds(p.bound_ns)}};
}

}  // namespace

json policy_state_json(const PolicyState& s, std::int64_t now_ns) {
  json pairs = json::array();
  for (const auto& p : s.verdict.pairs) pairs.push_back(pair_json(p));
  const Policy& p = s.policy;
  return {{"name", p.name},
          {"tenant", p.tenant},
          {"precision_seconds", static_cast<double>(p.precision_ns) * 1e-9},
          {"min_spans", p.min_spans},
          {"max_unknown_seconds", seconds(p.max_unknown_ns)},
          {"verdict", s.evaluated ? verdict_name(s.verdict.verdict) : "unknown"},
          {"reason", s.evaluated ? verdict_reason_name(s.verdict.reason) : "not_evaluated"},
          {"unknown_for_seconds",
           s.unknown_since_ns ? json(static_cast<double>(now_ns - *s.unknown_since_ns) * 1e-9) : json(nullptr)},
          {"degraded", s.degraded},
          {"degraded_for_seconds",
           s.degraded_since_ns ? json(static_cast<double>(now_ns - *s.degraded_since_ns) * 1e-9) : json(nullptr)},
          {"fired_total", s.fired_total},
          {"resolved_total", s.resolved_total},
          {"untrusted_spans", p.degraded.untrusted_spans},
          {"pairs", pairs}};
}

json policies_json(const std::vector<PolicyState>& states, const PolicyFileStatus& file, std::int64_t now_ns) {
  json list = json::array();
  for (const auto& s : states) list.push_back(policy_state_json(s, now_ns));
  return {{"file",
           {{"path", file.path},
            {"loads", file.loads},
            {"rejected", file.rejected},
            {"last_error", file.last_error ? json(*file.last_error) : json(nullptr)}}},
          {"policies", list}};
}

void append_policy_metrics(std::string& out, const std::vector<PolicyState>& states, const PolicyFileStatus& file) {
  PrometheusWriter w(out);
  // Labels: the policies' names and tenants, at most kMaxPolicies of each (policy_spec.hpp).
  w.family("skewscope_policy_met", "gauge",
           "1 when every pair the policy covers has an offset bound within its precision and no inversion; "
           "0 when violated or unknown (see skewscope_policy_verdict).");
  for (const auto& s : states)
    w.sample("skewscope_policy_met", {{"policy", s.policy.name}, {"tenant", s.policy.tenant}},
             s.evaluated && s.verdict.verdict == Verdict::met ? 1 : 0);
  w.family("skewscope_policy_verdict", "gauge", "1 for the policy's current verdict: met, violated or unknown.");
  for (const auto& s : states)
    for (Verdict v : {Verdict::met, Verdict::violated, Verdict::unknown})
      w.sample("skewscope_policy_verdict",
               {{"policy", s.policy.name}, {"tenant", s.policy.tenant}, {"verdict", verdict_name(v)}},
               (s.evaluated ? s.verdict.verdict : Verdict::unknown) == v ? 1 : 0);
  w.family("skewscope_policy_degraded", "gauge",
           "1 while the policy is in its degraded mode (entered and left with hysteresis).");
  for (const auto& s : states)
    w.sample("skewscope_policy_degraded", {{"policy", s.policy.name}, {"tenant", s.policy.tenant}}, s.degraded ? 1 : 0);
  w.family("skewscope_policy_file_loads_total", "counter",
           "Loads of --policy-file: accepted, or rejected (the policies before stay in force).");
  w.sample("skewscope_policy_file_loads_total", {{"result", "accepted"}}, static_cast<double>(file.loads));
  w.sample("skewscope_policy_file_loads_total", {{"result", "rejected"}}, static_cast<double>(file.rejected));
}

}  // namespace skewscope::policy
