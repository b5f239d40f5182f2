// The confidence policies of a workload (--policy-file, docs/policies.md): which pairs of domains
// it covers, the ordering precision it relies on, its limits and what happens when the precision
// is not met. Parsed and validated whole from YAML, as pure code: a file either yields every
// policy or one error that names its line, so a bad edit never half-replaces the good set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domains/tenant_map.hpp"
#include "skewscope/result.hpp"
#include "skewscope/span.hpp"

namespace skewscope::policy {

// Labels of skewscope_policy_met come from these names, so their count and shape are bounded.
constexpr std::size_t kMaxPolicies = 64;
constexpr std::size_t kMaxNameLength = 64;

// What a policy does while it is not met, besides its verdict in the API, /metrics and the gate.
struct DegradedMode {
  std::optional<std::string> alertmanager_url;  // POST {url}/api/v2/alerts (Alertmanager's v2 API)
  std::optional<std::string> webhook_url;       // POST url, a plain JSON body
  bool untrusted_spans = true;                  // spans of covered pairs carry trusted=false
};

struct Policy {
  std::string name;
  std::string tenant;                          // "" when the file names none
  std::vector<std::string> domains;            // globs (fnmatch): a pair is covered when both ends match one
  std::vector<Transport> transports;           // empty: every transport
  std::int64_t precision_ns = 0;               // the ordering granularity the workload relies on; > 0
  std::optional<std::int64_t> max_unknown_ns;  // unknown for longer than this counts as violated
  std::uint64_t min_spans = 1;                 // fewer spans in the window: unknown
  DegradedMode degraded;
  int line = 0;  // where the policy starts in its file (1-based), for messages
  // With tenants declared (docs/tenants.md): the globs of the policy's tenant. A pair is covered
  // only when its two ends are also the tenant's, so a tenant's verdict is its own pairs' alone.
  std::vector<std::string> tenant_globs;

  bool covers(std::string_view src, std::string_view dst, Transport transport) const;
};

struct PolicySet {
  std::vector<Policy> policies;  // in file order, names unique
  TenantMap tenants;             // the file's tenants: section (docs/tenants.md); empty without one
  const Policy* find(std::string_view name) const;
};

// The whole text, or the first problem as "line N: what is wrong".
Result<PolicySet> parse_policies(std::string_view yaml_text);
Result<Transport> parse_transport(std::string_view name);

// Binds each policy naming a tenant to that tenant's globs (tenant_globs). With tenants declared,
// a policy naming an undeclared tenant is refused ("line N: ..."); without, a tenant stays a label.
Status bind_policy_tenants(PolicySet& set, const TenantMap& tenants);

}  // namespace skewscope::policy
