// plan_agent: each `skewscope agent` option checked and turned into its typed setting. Kept apart
// from the run (runtime/agent_run.cpp) so that validation stays free of kernel, socket and thread
// concerns.
#include "cli/agent_plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "cli/listen_address.hpp"
#include "cli/option_checks.hpp"
#include "cli/tenant_options.hpp"
#include "domains/duration.hpp"
#include "skewscope/abi/payload_event.h"

namespace skewscope {
namespace {

std::string machine_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !is_valid_domain_name(name)) return "host";
  return name;
}

Status plan_payload(const AgentOptions& o, AgentPlan& plan) {
  if (o.payload_bytes > SKEWSCOPE_PAYLOAD_CALL_MAX)
    return Status::fail("--payload-bytes must be from 0 (off) to " + std::to_string(SKEWSCOPE_PAYLOAD_CALL_MAX));
  plan.payload.max_bytes = o.payload_bytes;
  auto detect = parse_payload_detect(o.payload_detect);
  if (!detect) return Status::fail("--payload-detect: " + detect.error);
  plan.payload.detect = *detect;
  for (const auto& text : o.payload_ports) {
    auto port = parse_payload_port(text);
    if (!port) return Status::fail("--payload-port: " + port.error);
    plan.payload.ports.push_back(*port);
  }
  if (plan.payload.max_bytes == 0 && (!o.payload_ports.empty() || o.payload_detect != "auto"))
    return Status::fail("--payload-port and --payload-detect need --payload-bytes");
  auto ring = parse_payload_ring_mb(o.payload_ring_mb);
  if (!ring) return Status::fail("--payload-ring-mb: " + ring.error);
  plan.payload.ring_bytes = *ring;
  // With --only-domains the kernel side copies only what the agent keeps (the domains' calls).
  plan.payload.scoped = plan.domains && plan.domains->only_domains();
  if (plan.payload.scoped) {
    plan.payload.scope_cgroups = plan.domains->cgroup_ids();
    plan.payload.scope_netns = plan.domains->netns_inodes();
  }
  return Status::ok();
}

// The exchange's options; its local addresses are those of every namespace this agent's domains
// cover (the agent's own for the host domain and for cgroup domains).
Status plan_exchange(const AgentOptions& o, const std::vector<DomainSpec>& specs, const std::string& host,
                     AgentPlan& plan) {
  if (o.exchange.empty()) {
    if (!o.exchange_config.empty()) return Status::fail("--exchange-config needs --exchange");
    if (!o.exchange_key_files.empty() || o.exchange_insecure)
      return Status::fail("--exchange-key-file and --exchange-insecure need --exchange");
    return Status::ok();
  }
  auto parsed = exchange::parse_exchange_settings(o.exchange, o.exchange_config, o.exchange_topic, o.exchange_group,
                                                  o.exchange_sample);
  if (!parsed) return Status::fail(parsed.error);
  exchange::ExchangeSettings settings = std::move(*parsed);
  settings.host_name = host;
  settings.domains_per_signer = o.exchange_domains_per_agent;
  if (Status trust = exchange::apply_trust_options(settings, o.exchange_key_files, o.exchange_insecure); !trust)
    return trust;
  bool host_netns = !o.only_domains;
  for (const auto& spec : specs) {
    if (spec.kind == DomainSpec::Kind::netns) {
      settings.netns_paths.push_back(spec.path);
    } else {
      host_netns = true;
    }
  }
  if (host_netns) settings.netns_paths.push_back("");
  plan.exchange = std::move(settings);
  return Status::ok();
}

// --nat-conntrack: `self`, `domains` (the namespace of every netns domain) or an absolute path;
// each namespace once.
Status plan_nat(const AgentOptions& o, const std::vector<DomainSpec>& specs, AgentPlan& plan) {
  auto add = [&plan](const std::string& path) {
    if (std::find(plan.nat_namespaces.begin(), plan.nat_namespaces.end(), path) == plan.nat_namespaces.end())
      plan.nat_namespaces.push_back(path);
  };
  for (const auto& item : o.nat_conntrack) {
    if (item == "self") {
      add(item);
    } else if (item == "domains") {
      bool any = false;
      for (const auto& spec : specs)
        if (spec.kind == DomainSpec::Kind::netns) add(spec.path), any = true;
      if (!any) return Status::fail("--nat-conntrack domains: no --domain NAME=netns:PATH is declared");
    } else if (!item.empty() && item.front() == '/') {
      add(item);
    } else {
      return Status::fail("--nat-conntrack '" + item + "' must be self, domains or an absolute namespace path");
    }
  }
  return Status::ok();
}

}  // namespace

Status plan_agent(const AgentOptions& o, AgentPlan& plan) {
  auto listen = parse_listen_address(o.listen);
  if (!listen) return Status::fail(listen.error);
  plan.listen = *listen;
  if (Status resolved = resolve_listen_address(plan.listen); !resolved) return resolved;
  auto window = parse_duration_ns(o.window);
  if (!window) return Status::fail("--window: " + window.error);
  if (*window < 1'000'000'000 || *window > kMaxWindowNs) return Status::fail("--window must be from 1s to 1h");
  plan.core.window_ns = *window;
  auto interval = parse_duration_ns(o.estimate_interval);
  if (!interval) return Status::fail("--estimate-interval: " + interval.error);
  if (*interval < 100'000'000 || *interval > 10'000'000'000)
    return Status::fail("--estimate-interval must be from 100ms to 10s");
  plan.core.estimate_interval_ns = *interval;
  auto send_age = parse_duration_ns(o.send_max_age);
  if (!send_age || *send_age <= 0 || *send_age > kMaxSendAgeNs)
    return Status::fail("--send-max-age: " + (send_age ? "must be positive and at most 1h" : send_age.error));
  plan.core.limits.send_max_age_ns = *send_age;
  if (o.max_pending == 0) return Status::fail("--max-pending must be at least 1");
  plan.core.limits.max_pending = o.max_pending;
  plan.core.at_risk_share = o.at_risk_share;
  auto grace = parse_duration_ns(o.capture_grace);
  if (!grace || *grace < 0) return Status::fail("--capture-grace: " + (grace ? "must not be negative" : grace.error));
  plan.capture_grace_ns = *grace;
  for (const auto& path : o.ptp4l_sockets)
    if (path.empty() || path.front() != '/')
      return Status::fail("--ptp4l-socket '" + path + "' must be an absolute path");
  plan.clocks.ptp4l_sockets = o.ptp4l_sockets;
  plan.clocks.max_drift_ppm = o.max_drift_ppm;
  plan.rdma = o.rdma;
  plan.control_socket = o.control_socket;
  plan.enable_spans_api = o.enable_spans_api;
  plan.peer_agents = o.peer_agents;
  plan.policy_file = o.policy_file;
  plan.web_config_file = o.web_config_file;
  plan.tenant_users = o.tenant_users;

  std::string host = o.host_name.empty() ? machine_hostname() : o.host_name;
  if (!is_valid_domain_name(host)) return Status::fail("--host-name '" + host + "' is not a valid domain name");
  std::vector<DomainSpec> specs;
  for (const auto& text : o.domains) {
    auto spec = parse_domain_spec(text);
    if (!spec) return Status::fail("--domain: " + spec.error);
    if (spec->name == host)
      return Status::fail("--domain " + spec->name + ": the name is already the host's (--host-name)");
    specs.push_back(*spec);
  }
  auto registry = DomainRegistry::from_specs(specs, host, o.only_domains);
  if (!registry) return Status::fail("--domain: " + registry.error);
  plan.domains.emplace(*registry.value);
  for (const auto& text : o.simulate) {
    auto sim = parse_clock_simulation(text);
    if (!sim) return Status::fail("--simulate-clock: " + sim.error);
    if (!plan.domains->find(sim->domain))
      return Status::fail("--simulate-clock: no domain named '" + sim->domain + "'");
    plan.simulations.push_back(*sim);
  }
  if (Status payload = plan_payload(o, plan); !payload) return payload;
  auto wire = parse_wire_interfaces(o.wire_timestamps);
  if (!wire) return Status::fail(wire.error);
  plan.wire.interfaces = *wire;
  for (const auto& path : o.wire_cgroups)
    if (Status cgroup = check_wire_cgroup(path); !cgroup) return cgroup;
  if (!o.wire_cgroups.empty() && plan.wire.interfaces.empty())
    return Status::fail("--wire-cgroup needs --wire-timestamps (the receive side is stamped on the named interfaces)");
  plan.wire.cgroups = o.wire_cgroups;
  if (o.wire_ack_samples && plan.wire.interfaces.empty())
    return Status::fail("--wire-ack-samples needs --wire-timestamps (ACKs are stamped on the named interfaces)");
  plan.wire.ack_samples = o.wire_ack_samples;
  if (Status nat = plan_nat(o, specs, plan); !nat) return nat;
  auto otlp = otlp::plan_otlp(
      {o.otlp_endpoint, o.otlp_sample, o.otlp_compression, o.otlp_ca_file, o.otlp_timeout, o.otlp_metrics},
      otlp::process_environment(), host);
  if (!otlp) return Status::fail(otlp.error);
  plan.otlp = std::move(*otlp);
  auto tenants = plan_tenants(o.tenants);
  if (!tenants) return Status::fail(tenants.error);
  plan.tenants = std::move(*tenants);
  return plan_exchange(o, specs, host, plan);
}

}  // namespace skewscope
