#include "cli/agent_command.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "api/control_socket.hpp"
#include "api/http_api.hpp"
#include "capture/payload_reader.hpp"
#include "capture/rdma_capture.hpp"
#include "capture/tcp_syscall_capture.hpp"
#include "capture/tracefs.hpp"
#include "cli/agent_routes.hpp"
#include "cli/capture_loop.hpp"
#include "cli/config_file.hpp"
#include "cli/listen_address.hpp"
#include "cli/option_checks.hpp"
#include "cli/payload_loop.hpp"
#include "cli/rdma_loop.hpp"
#include "cli/wire_runtime.hpp"
#include "clocks/clock_monitor.hpp"
#include "core/agent_core.hpp"
#include "domains/duration.hpp"
#include "exchange/kafka_exchange.hpp"
#include "skewscope/version.hpp"

namespace skewscope {
namespace {

std::string machine_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !is_valid_domain_name(name)) return "host";
  return name;
}

std::uint32_t own_netns_inode() {
  struct stat st {};
  return stat("/proc/self/ns/net", &st) == 0 ? static_cast<std::uint32_t>(st.st_ino) : 0;
}

int usage_error(const std::string& message) {
  std::cerr << "skewscope agent: " << message << "\n";
  return 2;
}

int runtime_error(const std::string& message) {
  std::cerr << "skewscope agent: " << message << "\n";
  return 1;
}

// Parsed and validated options: nothing here touches the kernel.
struct AgentPlan {
  ListenAddress listen;
  std::optional<DomainRegistry> domains;
  std::vector<ClockSimulation> simulations;
  AgentCoreConfig core;
  std::int64_t capture_grace_ns = 10'000'000'000;
  std::optional<exchange::ExchangeSettings> exchange;
  PayloadSettings payload;
  WireOptions wire;  // --wire-timestamps, --wire-cgroup
};

Status plan_payload(const AgentOptions& o, AgentPlan& plan) {
  if (o.payload_bytes > SKEWSCOPE_PAYLOAD_MAX)
    return Status::fail("--payload-bytes must be from 0 (off) to " + std::to_string(SKEWSCOPE_PAYLOAD_MAX));
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
    return Status::ok();
  }
  auto parsed = exchange::parse_exchange_settings(o.exchange, o.exchange_config, o.exchange_topic, o.exchange_group,
                                                  o.exchange_sample);
  if (!parsed) return Status::fail(parsed.error);
  exchange::ExchangeSettings settings = std::move(*parsed);
  settings.host_name = host;
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

Status plan_agent(const AgentOptions& o, AgentPlan& plan) {
  auto listen = parse_listen_address(o.listen);
  if (!listen) return Status::fail(listen.error);
  plan.listen = *listen;
  if (Status resolved = resolve_listen_address(plan.listen); !resolved) return resolved;
  auto window = parse_duration_ns(o.window);
  if (!window) return Status::fail("--window: " + window.error);
  if (*window < 1'000'000'000 || *window > kMaxWindowNs) return Status::fail("--window must be from 1s to 1h");
  plan.core.window_ns = *window;
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
  return plan_exchange(o, specs, host, plan);
}

// However long HTTP clients or a ptp4l reply keep the servers and threads busy, the process is
// gone within 3 s of the signal: 2.5 s for an orderly teardown, the rest for the exit itself.
constexpr std::int64_t kShutdownDeadlineNs = 2'500'000'000;

// Blocks until SIGINT/SIGTERM (returns it) or until `capture_failed` has been set for `grace_ns`
// (returns 0).
int wait_for_stop(const sigset_t& signals, const std::atomic<bool>& capture_failed, std::int64_t grace_ns) {
  std::optional<std::int64_t> failed_at;
  for (;;) {
    timespec step{0, 100'000'000};
    int signal = sigtimedwait(&signals, nullptr, &step);
    if (signal > 0) return signal;
    if (!capture_failed) continue;
    const std::int64_t now = monotonic_now_ns();
    if (!failed_at) failed_at = now;
    if (now - *failed_at >= grace_ns) return 0;
  }
}

std::string handle_control(const std::string& line, AgentCore& core, std::mutex& lock) {
  const std::string verb = "simulate ";
  if (line.rfind(verb, 0) != 0) return "error: unknown command (expected: simulate NAME=OFFSET[,DRIFTppm])";
  auto sim = parse_clock_simulation(line.substr(verb.size()));
  if (!sim) return "error: " + sim.error;
  std::lock_guard guard(lock);
  auto id = core.domains().find(sim->domain);
  if (!id) return "error: no domain named '" + sim->domain + "'";
  core.simulated_clocks().set(*id, sim->offset_ns, sim->drift_ppm, monotonic_now_ns());
  return "ok " + sim->domain + " clock offset " + format_duration_ns(sim->offset_ns) + ", drift " +
         std::to_string(sim->drift_ppm) + " ppm";
}

}  // namespace

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

int run_agent(const AgentOptions& options) {
  AgentPlan plan;
  if (Status planned = plan_agent(options, plan); !planned) return usage_error(planned.error);

  // Signals are taken by sigtimedwait in this thread only. Blocked before any thread exists
  // (librdkafka and the HTTP server start their own), since every thread inherits the mask and a
  // thread that did not block them would take the default action: exit without detaching first.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (Status tracefs = ensure_tracefs(); !tracefs) return runtime_error("tracefs: " + tracefs.error);

  AgentCore core(std::move(*plan.domains), plan.core);
  std::mutex core_lock;
  const std::int64_t start = monotonic_now_ns();
  for (const auto& sim : plan.simulations)
    core.simulated_clocks().set(*core.domains().find(sim.domain), sim.offset_ns, sim.drift_ppm, start);
  core.clock_mapping().sample_now();
  std::unique_ptr<exchange::KafkaExchange> kafka;
  if (plan.exchange) {
    core.enable_exchange(exchange::CoreExchangeConfig{plan.exchange->sample_one_in});
    auto created = exchange::KafkaExchange::create(*plan.exchange, core, core_lock);
    if (!created) return usage_error("--exchange: " + created.error);
    kafka = std::move(*created);
  }

  clocks::ClockConfig clock_config;
  clock_config.ptp4l_sockets = options.ptp4l_sockets;
  clock_config.max_drift_ppm = options.max_drift_ppm;
  clocks::ClockMonitor clock_monitor(clock_config);

  // The HTTP thread reads only the core (the source's counters are copied into it by the capture
  // thread), so the capture can be destroyed while the server still answers.
  std::unique_ptr<TcpSyscallCapture> capture;
  std::unique_ptr<WireRuntime> wire;  // --wire-timestamps
  HttpApi api(
      [&] {
        clocks::ClockSnapshot clock_snapshot = clock_monitor.snapshot();
        std::lock_guard guard(core_lock);
        const std::int64_t now = monotonic_now_ns();
        AgentReport report = core.report(now);
        if (wire) wire->fill(report, now);
        report.clocks = std::move(clock_snapshot);
        if (kafka && report.exchange) kafka->fill(*report.exchange);
        return report;
      },
      kVersion);
  add_analysis_routes(api, core, core_lock, options.enable_spans_api);
  if (Status web = api.use_web_config_file(options.web_config_file); !web) return usage_error(web.error);
  if (Status bound = api.bind(plan.listen.host, plan.listen.port); !bound) return runtime_error(bound.error);
  ControlSocket control([&](const std::string& line) { return handle_control(line, core, core_lock); });
  if (Status bound = control.bind(options.control_socket); !bound) return runtime_error(bound.error);

  auto choices = choose_hooks(probe_kernel_features(), tcp_hook_candidates(), plan.payload.max_bytes > 0);
  auto opened = TcpSyscallCapture::open(choices, plan.payload);
  if (!opened) return runtime_error(opened.error);
  capture = std::move(*opened);
  std::unique_ptr<PayloadRingReader> payload_reader;
  if (plan.payload.max_bytes > 0) {
    auto reader = PayloadRingReader::open(capture->payload_ring_fd(), capture->payload_counters_fd());
    if (!reader) return runtime_error(reader.error);
    payload_reader = std::move(*reader);
    core.enable_payload(plan.payload.max_bytes, MessagePairingLimits{});
  }
  core.set_own_endpoint(static_cast<std::uint16_t>(api.port()), own_netns_inode());
  if (!plan.wire.interfaces.empty()) {
    WireRuntimeConfig wire_config{plan.wire,
                                  plan.core.window_ns,
                                  plan.core.limits,
                                  core.estimator().config(),
                                  static_cast<std::uint16_t>(api.port()),
                                  own_netns_inode()};
    auto started = WireRuntime::start(std::move(wire_config), core, core_lock);
    if (!started) return runtime_error("--wire-timestamps: " + started.error);
    wire = std::move(*started);
  }
  std::unique_ptr<RdmaCapture> rdma;
  if (options.rdma) {
    auto opened_rdma =
        RdmaCapture::open([](const std::string& line) { std::cerr << "skewscope agent: " << line << std::endl; });
    if (!opened_rdma) return runtime_error("--rdma: " + opened_rdma.error);
    rdma = std::move(*opened_rdma);
  }

  std::atomic<bool> stopping{false};
  std::atomic<bool> capture_failed{false};
  std::thread capture_thread([&] {
    CaptureLoopEnd end = run_capture_loop(*capture, core, core_lock, stopping, TcpSyscallCapture::kMaxBatch);
    if (!end.failed) return;
    std::cerr << "skewscope agent: capture failed: " << end.error << "; every pair is now unknown; exiting in "
              << format_duration_ns(plan.capture_grace_ns) << std::endl;
    capture_failed = true;
  });
  std::thread payload_thread([&] {
    if (!payload_reader) return;
    std::string error = run_payload_loop(*payload_reader, core, core_lock, stopping);
    if (!error.empty()) std::cerr << "skewscope agent: payload capture stopped: " << error << std::endl;
  });
  std::thread rdma_thread([&] {
    if (!rdma) return;
    std::string error = run_rdma_loop(*rdma, core, core_lock, stopping);
    if (error.empty()) return;
    std::cerr << "skewscope agent: RDMA capture failed: " << error << "; exiting in "
              << format_duration_ns(plan.capture_grace_ns) << std::endl;
    capture_failed = true;
  });
  // The clock sources are polled on their own thread: a ptp4l that does not answer costs that
  // thread its reply timeout, never the capture.
  std::thread clock_thread([&] {
    while (!stopping) {
      clock_monitor.poll();
      auto bound = clock_monitor.snapshot().error_bound_seconds;
      if (kafka)
        kafka->set_clock_quality(bound ? static_cast<std::int64_t>(*bound * 1e9) : 0,
                                 static_cast<std::uint32_t>(clock_monitor.snapshot().status));
      {
        std::lock_guard guard(core_lock);
        core.set_clock_bound(clocks::bound_seconds_to_ns(bound));
      }
      for (int i = 0; i < 10 && !stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  if (kafka) kafka->start();  // reads this agent's addresses before returning
  api.start();
  control.start();
  std::cout << "skewscope agent " << kVersion << ": listening on " << plan.listen.host << ":" << api.port()
            << ", control socket " << options.control_socket << ", " << capture->attached().size()
            << " programs attached, " << core.domains().size() << " domains" << std::endl;
  if (wire)
    std::cout << "skewscope agent: wire timestamps on " << wire->capture().attachments().size()
              << " interfaces, send side " << wire->capture().send_path() << " (" << wire->capture().send_path_reason()
              << "), receive stamps "
              << (wire->capture().rx_timestamps_held() ? "from the kernel (net_timestamp held)" : "by the program")
              << std::endl;

  // Run until a stop signal, or until the capture has been dead for the grace period: long enough
  // for a scrape to see it (capture_up 0, every pair unknown), short enough that the service
  // manager restarts a working agent soon.
  int signal = wait_for_stop(stop_signals, capture_failed, plan.capture_grace_ns);
  if (signal) std::cout << "skewscope agent: stopping on signal " << signal << std::endl;
  const int exit_code = capture_failed ? 1 : 0;

  // Teardown on its own thread, so this one can enforce the deadline and take a second signal.
  // BPF first: from the first signal on, nothing is traced. Then the servers, whose clients are
  // not ours to wait for.
  std::atomic<bool> torn_down{false};
  std::thread teardown([&] {
    stopping = true;
    capture_thread.join();
    payload_thread.join();
    payload_reader.reset();
    rdma_thread.join();
    const std::int64_t detach_start = monotonic_now_ns();
    capture.reset();
    if (wire) wire->stop();
    rdma.reset();
    if (kafka) kafka->stop();
    std::cerr << "skewscope agent: BPF programs detached in "
              << format_duration_ns((monotonic_now_ns() - detach_start) / 1'000'000 * 1'000'000) << std::endl;
    api.stop();
    control.stop();
    clock_thread.join();
    torn_down = true;
  });
  const std::int64_t deadline = monotonic_now_ns() + kShutdownDeadlineNs;
  while (!torn_down) {
    timespec step{0, 50'000'000};
    if (sigtimedwait(&stop_signals, nullptr, &step) > 0) {
      std::cerr << "skewscope agent: second signal, exiting now" << std::endl;
      std::_Exit(1);  // the kernel detaches whatever BPF link is still open with the process
    }
    if (monotonic_now_ns() >= deadline) {
      std::cerr << "skewscope agent: shutdown still waiting after " << format_duration_ns(kShutdownDeadlineNs)
                << ", exiting now" << std::endl;
      std::_Exit(1);
    }
  }
  teardown.join();
  return exit_code;
}

}  // namespace skewscope
