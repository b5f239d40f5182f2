#include <doctest/doctest.h>

#include "policy/alert_payload.hpp"

using namespace skewscope;
using namespace skewscope::policy;

namespace {

PolicyState violated_state(const std::string& tenant) {
  PolicyState s;
  s.policy.name = "audit";
  s.policy.tenant = tenant;
  s.policy.precision_ns = 100'000;
  s.evaluated = true;
  s.verdict.verdict = Verdict::violated;
  s.verdict.reason = VerdictReason::inversion;
  s.degraded = true;
  return s;
}

}  // namespace

TEST_CASE("RFC 3339 in UTC with milliseconds") {
  CHECK(rfc3339(0) == "1970-01-01T00:00:00.000Z");
  CHECK(rfc3339(1'764'642'600'123'456'789) == "2025-12-02T02:30:00.123Z");
}

TEST_CASE("an Alertmanager v2 alert: labels identify it, endsAt only when resolved") {
  AlertContext context{"host-1", "http://host-1:9477/api/v1/policies", 1'764'642'600'000'000'000, std::nullopt};
  auto alerts = alertmanager_alerts(violated_state("payments"), context);
  REQUIRE(alerts.is_array());
  REQUIRE(alerts.size() == 1);
  const auto& a = alerts[0];
  CHECK(a["labels"] ==
        nlohmann::json{{"alertname", kAlertName}, {"policy", "audit"}, {"instance", "host-1"}, {"tenant", "payments"}});
  CHECK(a["annotations"]["verdict"] == "violated");
  CHECK(a["annotations"]["reason"] == "inversion");
  CHECK(a["annotations"]["precision"] == "100us");
  CHECK(a["startsAt"] == "2025-12-02T02:30:00.000Z");
  CHECK_FALSE(a.contains("endsAt"));
  CHECK(a["generatorURL"] == "http://host-1:9477/api/v1/policies");

  context.resolved_unix_ns = 1'764'642'660'000'000'000;
  auto resolved = alertmanager_alerts(violated_state(""), context);
  CHECK(resolved[0]["endsAt"] == "2025-12-02T02:31:00.000Z");
  CHECK(resolved[0]["startsAt"] == "2025-12-02T02:30:00.000Z");
  CHECK_FALSE(resolved[0]["labels"].contains("tenant"));  // an empty label value is no label
}

TEST_CASE("the plain webhook body says firing or resolved, with the policy's state") {
  AlertContext context{"host-1", "", 1'764'642'600'000'000'000, std::nullopt};
  auto firing = webhook_body(violated_state("t"), context, 0);
  CHECK(firing["status"] == "firing");
  CHECK(firing["resolved_at"].is_null());
  CHECK(firing["state"]["verdict"] == "violated");
  CHECK(firing["state"]["degraded"] == true);
  context.resolved_unix_ns = 1'764'642'601'000'000'000;
  auto resolved = webhook_body(violated_state("t"), context, 0);
  CHECK(resolved["status"] == "resolved");
  CHECK(resolved["resolved_at"] == "2025-12-02T02:30:01.000Z");
}
