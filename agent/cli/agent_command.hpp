// `skewscope agent`: validate everything, bind, load and attach, then run until SIGINT/SIGTERM
// (exit 0) or until the capture fails (exit 1 after --capture-grace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace skewscope {

struct AgentOptions {
  std::string listen = "0.0.0.0:9477";
  std::string host_name;  // default: the machine's hostname
  std::vector<std::string> domains;
  bool only_domains = false;
  std::vector<std::string> simulate;
  std::string window = "30s";
  std::string estimate_interval = "250ms";  // the estimator's evaluation of every pair
  std::string control_socket = "/run/skewscope.sock";
  std::size_t max_pending = 1 << 18;
  std::string send_max_age = "10s";
  std::vector<std::string> ptp4l_sockets;  // empty: probe the usual paths
  double max_drift_ppm = 100;
  double at_risk_share = 0.5;
  bool enable_spans_api = false;      // /api/v1/spans shows per-message data of the whole host
  std::string capture_grace = "10s";  // a dead capture: report unknown this long, then exit 1
  std::string web_config_file;        // TLS and basic auth for --listen, exporter-toolkit format
  // The exchange (one agent per host, cross-host halves over Kafka); empty: not used.
  std::string exchange;
  std::vector<std::string> exchange_config;
  std::string exchange_topic = "skewscope.halves.v1";
  std::string exchange_group = "skewscope";
  std::string exchange_sample = "1/1";
  std::vector<std::string> exchange_key_files;  // signing and verifying keys (docs/security.md)
  bool exchange_insecure = false;               // no keys: nothing signed or verified
  std::size_t exchange_domains_per_agent = 64;  // domain names one agent may speak for
  // Payload capture for message-level spans (Kafka batches, ZMTP messages); 0 bytes: off.
  std::uint32_t payload_bytes = 0;
  std::vector<std::string> payload_ports;    // kafka=PORT, zmtp=PORT
  std::string payload_detect = "auto";       // auto: first bytes and ports; ports: ports only
  std::uint32_t payload_ring_mb = 8;         // the payload ring buffer's size
  std::vector<std::string> wire_timestamps;  // IFACE[@NETNS_PATH],...: wire-level stamps; empty: off
  std::vector<std::string> wire_cgroups;     // sock_ops send side for these cgroups' sockets
  bool wire_ack_samples = false;             // pure ACKs as reverse one-way samples
  std::vector<std::string> nat_conntrack;    // self, domains or NETNS_PATH: read these namespaces' NAT; empty: off
  bool rdma = false;                         // RDMA verbs halves from uprobes in libibverbs and its providers
  std::string policy_file;                   // confidence policies (docs/policies.md); empty: none
  std::vector<std::string> tenants;          // NAME=DOMAIN_GLOB,...: tenants (docs/tenants.md)
  std::vector<std::string> tenant_users;     // USER=TENANT,...: basic-auth users bound to tenants
  // OTLP/HTTP trace export (docs/otlp.md); empty endpoint: the OTEL_EXPORTER_OTLP_* environment, else off.
  std::string otlp_endpoint;
  std::string otlp_sample;
  std::string otlp_compression;
  std::string otlp_ca_file;
  std::string otlp_timeout;
  bool otlp_metrics = false;             // --otlp-metrics
  std::vector<std::string> peer_agents;  // --peer-agent URL...: the live page's merged view
};

void add_agent_options(CLI::App& command, AgentOptions& options);
// Plans the options (cli/agent_plan.hpp; a usage error exits 2 before anything starts), then runs
// the agent on that plan (runtime/agent_run.hpp). Exit code: 0, 1 runtime error, 2 usage error.
int run_agent_command(const AgentOptions& options);

}  // namespace skewscope
