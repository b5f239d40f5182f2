// The flags of `skewscope agent`: each option's name, help text, default and CLI11 check. Its own
// file because it is the command's whole surface (docs/contract.md lists every flag declared here);
// validation is in agent_plan.cpp, the run in runtime/agent_run.cpp.
#include "cli/agent_command.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <utility>

#include "cli/agent_plan.hpp"
#include "cli/config_file.hpp"
#include "cli/option_checks.hpp"
#include "runtime/agent_run.hpp"

namespace skewscope {

void add_agent_options(CLI::App& c, AgentOptions& o) {
  add_config_file_option(c);
  c.add_option("--listen", o.listen, "HTTP address for /, /metrics, /api/v1/status (port 0: any free port)")
      ->capture_default_str();
  c.add_option("--host-name", o.host_name, "domain of events no --domain matches (default: hostname)");
  c.add_option("--domain", o.domains, "NAME=netns:PATH or NAME=cgroup:PATH; repeatable");
  c.add_flag("--only-domains", o.only_domains, "drop events outside the declared domains");
  c.add_option("--simulate-clock", o.simulate, "lab only: NAME=OFFSET[,DRIFTppm], e.g. infer=+5ms; repeatable");
  c.add_option("--window", o.window, "health window")->capture_default_str();
  c.add_option("--estimate-interval", o.estimate_interval, "how often offsets are estimated and diagnosed (100ms-10s)")
      ->capture_default_str();
  c.add_option("--control-socket", o.control_socket, "unix socket for mutating commands (mode 0600)")
      ->capture_default_str();
  c.add_option("--max-pending", o.max_pending, "bound on halves waiting for their other half")
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& s) { return check_count(s, 1, kMaxPendingLimit).error; }, "1-4194304"));
  c.add_option("--send-max-age", o.send_max_age, "a send not received within this is counted unpaired")
      ->capture_default_str();
  c.add_option("--ptp4l-socket", o.ptp4l_sockets, "ptp4l management socket to read; repeatable (default: probe)");
  c.add_option("--max-drift-ppm", o.max_drift_ppm, "clock drift assumed since the last sync, in the error bound")
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& s) { return check_finite(s, 0, 10000).error; }, "0-10000"));
  c.add_option("--at-risk-share", o.at_risk_share, "a pair is at_risk when |offset| >= share x Δt_min")
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& s) { return check_finite(s, 0.01, 1).error; }, "0.01-1"));
  c.add_flag("--enable-spans-api", o.enable_spans_api,
             "serve GET /api/v1/spans: per-message timing of every traced connection on this host, to anyone "
             "who can reach --listen (off: 404)");
  c.add_option("--capture-grace", o.capture_grace,
               "after the capture fails, report every pair unknown for this long, then exit 1")
      ->capture_default_str();
  c.add_option(
      "--peer-agent", o.peer_agents,
      "URL of another agent ([https://][user:password@]host:port; repeatable): the live page at / "
      "shows its pairs beside this agent's, merged as `skewscope status` merges several agents (GET /api/v1/merged)");
  c.add_option("--policy-file", o.policy_file,
               "YAML confidence policies (docs/policies.md): the precision each workload needs and what to do when "
               "it is not met; reloaded on SIGHUP and when the file changes");
  c.add_option("--tenant", o.tenants,
               "NAME=DOMAIN_GLOB[,...]: a tenant and its domains; ?tenant=NAME and --tenant-user restrict a view "
               "to the pairs whose two ends are its domains (docs/tenants.md); repeatable");
  c.add_option("--tenant-user", o.tenant_users,
               "USER=TENANT[,...]: this basic-auth user of --web.config.file sees only these tenants (403 for the "
               "rest); a user bound to none is an operator; repeatable");
  c.add_option("--web.config.file", o.web_config_file,
               "YAML with tls_server_config (cert_file, key_file) and basic_auth_users (bcrypt), as the "
               "Prometheus exporters read it");
  c.add_option("--exchange", o.exchange, "kafka:HOST:PORT[,HOST:PORT...]: ship and join cross-host halves over Kafka");
  c.add_option("--exchange-config", o.exchange_config,
               "KEY=VALUE librdkafka property (security.protocol, sasl.*, ssl.*); repeatable");
  c.add_option("--exchange-topic", o.exchange_topic, "topic of the exchanged halves")->capture_default_str();
  c.add_option("--exchange-group", o.exchange_group, "consumer group of the agents")->capture_default_str();
  c.add_option("--exchange-sample", o.exchange_sample, "1/N: ship 1 connection in N, by canonical 4-tuple hash")
      ->capture_default_str();
  c.add_option("--exchange-key-file", o.exchange_key_files,
               "HMAC key (hex, mode 0600) or a directory of them: records are signed with the first and "
               "accepted with any; re-read every 2 s; repeatable");
  c.add_option("--exchange-domains-per-agent", o.exchange_domains_per_agent,
               "domain names one other agent may speak for on the exchange (more: its records are refused)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
      ->capture_default_str();
  c.add_flag("--exchange-insecure", o.exchange_insecure,
             "run the exchange without keys: anyone who can write to the topic can speak for the agents");
  c.add_option("--payload-bytes", o.payload_bytes,
               "copy up to N bytes of each send/receive on Kafka and ZMTP sockets for message-level spans "
               "(0: off, at most 524288; a call beyond 8192 is copied in records of 8192, by the socket-layer "
               "variant only: the syscall variants copy 8192 at most)")
      ->capture_default_str();
  c.add_option("--payload-port", o.payload_ports,
               "kafka=PORT or zmtp=PORT: sockets on this port are that protocol; repeatable");
  c.add_option("--payload-detect", o.payload_detect, "auto (first bytes, then ports) or ports (only --payload-port)")
      ->capture_default_str();
  c.add_option("--payload-ring-mb", o.payload_ring_mb,
               "payload ring buffer size in MiB (a power of two, 1..256): slack for a reader the machine delays")
      ->capture_default_str();
  c.add_option("--wire-timestamps", o.wire_timestamps,
               "IFACE[@NETNS_PATH][,...]: also stamp TCP segments where they leave and enter these interfaces "
               "(tc clsact; never on interfaces not named); repeatable");
  c.add_option("--wire-cgroup", o.wire_cgroups,
               "cgroup v2 directory whose sockets' sends are stamped by the sock_ops TX timestamping callbacks "
               "(Linux >= 6.14; else tc egress); repeatable");
  c.add_flag("--wire-ack-samples", o.wire_ack_samples,
             "with --wire-timestamps: pair pure TCP ACKs too (by ack number), so even a one-way flow bounds the "
             "clock offset from both sides");
  c.add_option("--nat-conntrack", o.nat_conntrack,
               "pair through NAT: read the conntrack entries of these network namespaces (self: the agent's, "
               "domains: every --domain netns:PATH, or a namespace path such as a router's), comma-separated; "
               "repeatable")
      ->delimiter(',');
  c.add_flag("--rdma", o.rdma, "capture RDMA verbs (RC SEND/RECV) with uprobes in libibverbs and its providers");
  c.add_option("--otlp-endpoint", o.otlp_endpoint,
               "http[s]://HOST:PORT[/BASE]: export every paired span as an OTLP span to BASE/v1/traces "
               "(default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT; none: off)");
  c.add_option("--otlp-sample", o.otlp_sample,
               "1/N: export the spans of one connection in N (negative spans and at-risk pairs always; default 1/1)");
  c.add_option("--otlp-compression", o.otlp_compression,
               "gzip or none (default: OTEL_EXPORTER_OTLP_COMPRESSION, else none)");
  c.add_option("--otlp-ca-file", o.otlp_ca_file, "CA certificates (PEM) that sign an https endpoint's certificate");
  c.add_option("--otlp-timeout", o.otlp_timeout,
               "timeout of one export request (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)");
  c.add_flag("--otlp-metrics", o.otlp_metrics,
             "also export each pair's health, state, offset, bound and delta_t_min as OTLP gauges to BASE/v1/metrics "
             "(or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT), every OTEL_METRIC_EXPORT_INTERVAL ms (default 60000)");
}

int run_agent_command(const AgentOptions& options) {
  AgentPlan plan;
  if (Status planned = plan_agent(options, plan); !planned) {
    std::cerr << "skewscope agent: " << planned.error << "\n";
    return 2;
  }
  return run_agent(std::move(plan));
}

}  // namespace skewscope
