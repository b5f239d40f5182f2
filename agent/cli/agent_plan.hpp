// The `skewscope agent` options, parsed and validated into what the run needs. Its own file
// because it is the part that never touches the kernel: every usage error (exit 2) is found here,
// before anything is bound, loaded or attached.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "capture/payload_settings.hpp"
#include "capture/wire_capture.hpp"
#include "cli/agent_command.hpp"
#include "cli/listen_address.hpp"
#include "core/agent_core.hpp"
#include "domains/domain_registry.hpp"
#include "domains/domain_spec.hpp"
#include "domains/tenant_map.hpp"
#include "exchange/exchange_settings.hpp"
#include "otlp/otlp_settings.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

struct AgentPlan {
  ListenAddress listen;
  std::optional<DomainRegistry> domains;
  std::vector<ClockSimulation> simulations;
  AgentCoreConfig core;
  std::int64_t capture_grace_ns = 10'000'000'000;
  std::optional<exchange::ExchangeSettings> exchange;
  PayloadSettings payload;
  WireOptions wire;                         // --wire-timestamps, --wire-cgroup
  std::vector<std::string> nat_namespaces;  // --nat-conntrack, resolved: "self" or a path; empty: off
  std::optional<otlp::OtlpSettings> otlp;   // --otlp-endpoint or the OTEL_EXPORTER_OTLP_* environment
  TenantMap tenants;                        // --tenant (or the policy file's tenants:); empty: none
};

// Fills `plan` from `options`; the error names the option at fault.
Status plan_agent(const AgentOptions& options, AgentPlan& plan);

}  // namespace skewscope
