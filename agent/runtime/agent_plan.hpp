// Everything the run of `skewscope agent` needs, already checked: the planner (cli/agent_plan.*)
// fills it from the flags and the config file, and the run (runtime/agent_run.*) reads nothing
// else. It lives in runtime/ because the run is its reader and cli/ comes after runtime/: the
// flags' parsed values stop at the planner, so no `AgentOptions` reaches the runtime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/listen_socket.hpp"
#include "capture/payload_settings.hpp"
#include "capture/wire_capture.hpp"
#include "clocks/clock_monitor.hpp"
#include "core/agent_core.hpp"
#include "domains/domain_registry.hpp"
#include "domains/domain_spec.hpp"
#include "domains/tenant_map.hpp"
#include "exchange/exchange_settings.hpp"
#include "otlp/otlp_settings.hpp"

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
  clocks::ClockConfig clocks;               // --ptp4l-socket, --max-drift-ppm
  bool rdma = false;                        // --rdma
  std::string control_socket;               // --control-socket
  bool enable_spans_api = false;            // --enable-spans-api
  std::vector<std::string> peer_agents;     // --peer-agent; empty: no merged view
  // Read by the run, whose loaders check them (a bad file is still a usage error, exit 2):
  std::string policy_file;                // --policy-file; empty: none
  std::string web_config_file;            // --web.config.file; empty: plain HTTP, no auth
  std::vector<std::string> tenant_users;  // --tenant-user, bound once the web config's users are known
};

}  // namespace skewscope
