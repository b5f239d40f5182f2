#include "cli/agent_command.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

#include "api/control_socket.hpp"
#include "api/http_api.hpp"
#include "capture/tcp_syscall_capture.hpp"
#include "capture/tracefs.hpp"
#include "cli/agent_core.hpp"
#include "cli/agent_routes.hpp"
#include "clocks/clock_monitor.hpp"
#include "cli/listen_address.hpp"
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
  std::optional<exchange::ExchangeSettings> exchange;
};

// The exchange's options; its local addresses are those of every namespace this agent's domains
// cover (the agent's own for the host domain and for cgroup domains).
std::string plan_exchange(const AgentOptions& o, const std::vector<DomainSpec>& specs, const std::string& host,
                          AgentPlan& plan) {
  if (o.exchange.empty()) {
    if (!o.exchange_config.empty()) return "--exchange-config needs --exchange";
    return {};
  }
  exchange::ExchangeSettings settings;
  if (std::string e = exchange::parse_exchange_settings(o.exchange, o.exchange_config, o.exchange_topic,
                                                        o.exchange_group, o.exchange_sample, settings);
      !e.empty())
    return e;
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
  return {};
}

std::string plan_agent(const AgentOptions& o, AgentPlan& plan) {
  auto listen = parse_listen_address(o.listen);
  if (!listen) return listen.error;
  plan.listen = *listen;
  auto window = parse_duration_ns(o.window);
  if (!window) return "--window: " + window.error;
  if (*window < 1'000'000'000) return "--window must be at least 1s";
  plan.core.window_ns = *window;
  auto send_age = parse_duration_ns(o.send_max_age);
  if (!send_age || *send_age <= 0) return "--send-max-age: " + (send_age ? "must be positive" : send_age.error);
  plan.core.limits.send_max_age_ns = *send_age;
  if (o.max_pending == 0) return "--max-pending must be at least 1";
  plan.core.limits.max_pending = o.max_pending;
  plan.core.at_risk_share = o.at_risk_share;
  for (const auto& path : o.ptp4l_sockets)
    if (path.empty() || path.front() != '/') return "--ptp4l-socket '" + path + "' must be an absolute path";

  std::string host = o.host_name.empty() ? machine_hostname() : o.host_name;
  if (!is_valid_domain_name(host)) return "--host-name '" + host + "' is not a valid domain name";
  std::vector<DomainSpec> specs;
  for (const auto& text : o.domains) {
    auto spec = parse_domain_spec(text);
    if (!spec) return "--domain: " + spec.error;
    if (spec->name == host) return "--domain " + spec->name + ": the name is already the host's (--host-name)";
    specs.push_back(*spec);
  }
  auto registry = DomainRegistry::from_specs(specs, host, o.only_domains);
  if (!registry) return "--domain: " + registry.error;
  plan.domains.emplace(*registry.value);
  for (const auto& text : o.simulate) {
    auto sim = parse_clock_simulation(text);
    if (!sim) return "--simulate-clock: " + sim.error;
    if (!plan.domains->find(sim->domain)) return "--simulate-clock: no domain named '" + sim->domain + "'";
    plan.simulations.push_back(*sim);
  }
  return plan_exchange(o, specs, host, plan);
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
  c.add_option("--listen", o.listen, "HTTP address for /, /metrics, /api/v1/status (port 0: any free port)")
      ->capture_default_str();
  c.add_option("--host-name", o.host_name, "domain of events no --domain matches (default: hostname)");
  c.add_option("--domain", o.domains, "NAME=netns:PATH or NAME=cgroup:PATH; repeatable");
  c.add_flag("--only-domains", o.only_domains, "drop events outside the declared domains");
  c.add_option("--simulate-clock", o.simulate, "lab only: NAME=OFFSET[,DRIFTppm], e.g. infer=+5ms; repeatable");
  c.add_option("--window", o.window, "health window")->capture_default_str();
  c.add_option("--control-socket", o.control_socket, "unix socket for mutating commands (mode 0600)")
      ->capture_default_str();
  c.add_option("--max-pending", o.max_pending, "bound on halves waiting for their other half")->capture_default_str();
  c.add_option("--send-max-age", o.send_max_age, "a send not received within this is counted unpaired")
      ->capture_default_str();
  c.add_option("--ptp4l-socket", o.ptp4l_sockets, "ptp4l management socket to read; repeatable (default: probe)");
  c.add_option("--max-drift-ppm", o.max_drift_ppm, "clock drift assumed since the last sync, in the error bound")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10000.0));
  c.add_option("--at-risk-share", o.at_risk_share, "a pair is at_risk when |offset| >= share x Δt_min")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  c.add_option("--exchange", o.exchange, "kafka:HOST:PORT[,HOST:PORT...]: ship and join cross-host halves over Kafka");
  c.add_option("--exchange-config", o.exchange_config, "KEY=VALUE librdkafka property (security.protocol, sasl.*, ssl.*); repeatable");
  c.add_option("--exchange-topic", o.exchange_topic, "topic of the exchanged halves")->capture_default_str();
  c.add_option("--exchange-group", o.exchange_group, "consumer group of the agents")->capture_default_str();
  c.add_option("--exchange-sample", o.exchange_sample, "1/N: ship 1 connection in N, by canonical 4-tuple hash")
      ->capture_default_str();
}

int run_agent(const AgentOptions& options) {
  AgentPlan plan;
  if (std::string error = plan_agent(options, plan); !error.empty()) return usage_error(error);

  if (std::string error = ensure_tracefs(); !error.empty()) return runtime_error("tracefs: " + error);

  AgentCore core(std::move(*plan.domains), plan.core);
  std::mutex core_lock;
  const std::int64_t start = monotonic_now_ns();
  for (const auto& sim : plan.simulations)
    core.simulated_clocks().set(*core.domains().find(sim.domain), sim.offset_ns, sim.drift_ppm, start);
  core.clock_mapping().sample_now();
  std::unique_ptr<exchange::KafkaExchange> kafka;
  if (plan.exchange) {
    core.enable_exchange(exchange::CoreExchangeConfig{plan.exchange->sample_one_in});
    std::string error;
    kafka = exchange::KafkaExchange::create(*plan.exchange, core, core_lock, error);
    if (!kafka) return usage_error("--exchange: " + error);
  }

  clocks::ClockConfig clock_config;
  clock_config.ptp4l_sockets = options.ptp4l_sockets;
  clock_config.max_drift_ppm = options.max_drift_ppm;
  clocks::ClockMonitor clock_monitor(clock_config);

  std::unique_ptr<TcpSyscallCapture> capture;
  HttpApi api(
      [&] {
        SourceCounters counters = capture ? capture->counters() : SourceCounters{};
        clocks::ClockSnapshot clock_snapshot = clock_monitor.snapshot();
        std::lock_guard guard(core_lock);
        AgentReport report = core.report(monotonic_now_ns(), counters);
        report.clocks = std::move(clock_snapshot);
        if (kafka && report.exchange) kafka->fill(*report.exchange);
        return report;
      },
      kVersion);
  add_analysis_routes(api, core, core_lock);
  if (std::string error = api.bind(plan.listen.host, plan.listen.port); !error.empty()) return runtime_error(error);
  ControlSocket control([&](const std::string& line) { return handle_control(line, core, core_lock); });
  if (std::string error = control.bind(options.control_socket); !error.empty()) return runtime_error(error);

  auto choices = choose_hooks(probe_kernel_features(), tcp_hook_candidates());
  std::string load_error;
  capture = TcpSyscallCapture::open(choices, load_error);
  if (!capture) return runtime_error(load_error);
  core.set_own_endpoint(static_cast<std::uint16_t>(api.port()), own_netns_inode());

  // Signals are taken by sigwait in this thread only; the workers never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::atomic<bool> stopping{false};
  std::thread capture_thread([&] {
    std::vector<skewscope_half_event> batch;
    std::int64_t last_tick = 0;
    bool behind = false;
    while (!stopping) {
      batch.clear();
      // 20 ms between passes: halves pair within tens of ms, and the kernel side does not wake us
      // per record. A full batch means a backlog: go again at once.
      if (!capture->poll(batch, std::chrono::milliseconds(behind ? 0 : 20))) break;
      behind = batch.size() >= TcpSyscallCapture::kMaxBatch;
      const std::int64_t now = monotonic_now_ns();
      std::lock_guard guard(core_lock);
      if (now - last_tick >= 100'000'000) {
        core.clock_mapping().sample_now();
        core.tick(now);
        last_tick = now;
      }
      core.ingest(batch);
    }
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
        core.set_clock_bound(bound ? std::optional<std::int64_t>(static_cast<std::int64_t>(*bound * 1e9)) : std::nullopt);
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

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::cout << "skewscope agent: stopping on signal " << signal << std::endl;
  stopping = true;
  capture_thread.join();
  clock_thread.join();
  if (kafka) kafka->stop();
  api.stop();
  control.stop();
  return 0;
}

}  // namespace skewscope
