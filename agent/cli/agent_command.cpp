// The flags of `skewscope agent`: each option's name, help text, default and CLI11 check. Its own
// file because it is the command's whole surface (docs/contract.md lists every flag declared here);
// validation is in agent_plan.cpp, the run in agent_run.cpp.
#include "cli/agent_command.hpp"

#include <CLI/CLI.hpp>

#include "cli/config_file.hpp"
#include "cli/option_checks.hpp"

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
  c.add_option("--payload-bytes", o.payload_bytes,
               "copy up to N bytes of each send/receive on Kafka and ZMTP sockets for message-level spans "
               "(0: off, at most 8192)")
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
  c.add_flag("--rdma", o.rdma, "capture RDMA verbs (RC SEND/RECV) with uprobes in libibverbs and its providers");
}

}  // namespace skewscope
