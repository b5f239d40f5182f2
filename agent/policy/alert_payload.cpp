#include "policy/alert_payload.hpp"

#include <ctime>

#include "domains/duration.hpp"
#include "policy/policy_output.hpp"

namespace skewscope::policy {

std::string rfc3339(std::int64_t unix_ns) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  const int millis = static_cast<int>((unix_ns % 1'000'000'000) / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  // Room for every int the fields could hold (gcc cannot see gmtime_r's ranges): never truncated.
  char text[80];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

nlohmann::json alertmanager_alerts(const PolicyState& state, const AlertContext& context) {
  const Policy& p = state.policy;
  nlohmann::json labels = {{"alertname", kAlertName}, {"policy", p.name}, {"instance", context.agent}};
  if (!p.tenant.empty()) labels["tenant"] = p.tenant;  // an empty label value means no label
  const std::string verdict = verdict_name(state.verdict.verdict);
  const std::string reason = verdict_reason_name(state.verdict.reason);
  nlohmann::json alert = {
      {"labels", labels},
      {"annotations",
       {{"summary", "timestamps can no longer be trusted to order events at " + format_duration_ns(p.precision_ns) +
                        " for policy " + p.name + ": " + verdict + " (" + reason + ")"},
        {"verdict", verdict},
        {"reason", reason},
        {"precision", format_duration_ns(p.precision_ns)}}},
      {"startsAt", rfc3339(context.fired_unix_ns)},
      {"generatorURL", context.generator_url}};
  if (context.resolved_unix_ns) alert["endsAt"] = rfc3339(*context.resolved_unix_ns);
  return nlohmann::json::array({alert});
}

nlohmann::json webhook_body(const PolicyState& state, const AlertContext& context, std::int64_t monotonic_now_ns) {
  return {{"status", context.resolved_unix_ns ? "resolved" : "firing"},
          {"policy", state.policy.name},
          {"tenant", state.policy.tenant},
          {"agent", context.agent},
          {"fired_at", rfc3339(context.fired_unix_ns)},
          {"resolved_at", context.resolved_unix_ns ? nlohmann::json(rfc3339(*context.resolved_unix_ns)) : nullptr},
          {"state", policy_state_json(state, monotonic_now_ns)}};
}

}  // namespace skewscope::policy
