// The bodies a degraded-mode edge is delivered as (docs/policies.md, "Degraded mode"): one
// Alertmanager v2 alert (POST /api/v2/alerts takes a JSON array of alerts; labels identify the
// alert, so firing and resolving one policy on one agent address the same alert), and a plain
// JSON object for any other webhook. Pure: the wall-clock times are passed in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/policy_tracker.hpp"

namespace skewscope::policy {

constexpr const char* kAlertName = "SkewscopePolicyNotMet";

// RFC 3339 in UTC with milliseconds, e.g. 2026-12-02T02:30:00.123Z.
std::string rfc3339(std::int64_t unix_ns);

struct AlertContext {
  std::string agent;                             // the instance label: this agent's host name
  std::string generator_url;                     // where the verdict can be read (its /api/v1/policies)
  std::int64_t fired_unix_ns = 0;                // startsAt: when the degraded mode was entered
  std::optional<std::int64_t> resolved_unix_ns;  // endsAt: set on a resolving edge only
};

// `state` is the policy's state at the edge (its verdict then).
nlohmann::json alertmanager_alerts(const PolicyState& state, const AlertContext& context);
nlohmann::json webhook_body(const PolicyState& state, const AlertContext& context, std::int64_t monotonic_now_ns);

}  // namespace skewscope::policy
