// run_agent: the run of `skewscope agent` once its options are planned (cli/agent_plan.cpp): bind
// the servers, load and attach the capture, start the threads that feed the core, wait for a stop
// (agent_shutdown.cpp), then tear down in order. Its own file because it owns every long-lived
// object of the process and the order in which they start and stop.
#include "runtime/agent_run.hpp"

#include <pthread.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "api/agent_control.hpp"
#include "api/agent_routes.hpp"
#include "api/control_socket.hpp"
#include "api/http_api.hpp"
#include "api/status_json.hpp"
#include "api/tenant_view.hpp"
#include "capture/features.hpp"
#include "capture/payload_reader.hpp"
#include "capture/rdma_capture.hpp"
#include "capture/tcp_syscall_capture.hpp"
#include "capture/tracefs.hpp"
#include "clocks/clock_monitor.hpp"
#include "core/report_diagnosis.hpp"
#include "core/shared_core.hpp"
#include "domains/duration.hpp"
#include "runtime/agent_shutdown.hpp"
#include "runtime/capture_loop.hpp"
#include "runtime/clock_step_watch.hpp"
#include "runtime/clock_thread.hpp"
#include "runtime/kafka_exchange.hpp"
#include "runtime/otlp_feed.hpp"
#include "runtime/payload_loop.hpp"
#include "runtime/peer_agents.hpp"
#include "runtime/policy_runtime.hpp"
#include "runtime/policy_webhooks.hpp"
#include "runtime/rdma_loop.hpp"
#include "runtime/wire_runtime.hpp"
#include "skewscope/version.hpp"

namespace skewscope {
namespace {

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

}  // namespace

int run_agent(AgentPlan plan) {
  // Signals are taken by sigtimedwait in this thread only. Blocked before any thread exists
  // (librdkafka and the HTTP server start their own), since every thread inherits the mask and a
  // thread that did not block them would take the default action: exit without detaching first.
  const sigset_t stop_signals = block_stop_signals();
  // --policy-file: SIGHUP reloads it, taken by the policy thread; a bad file fails the start.
  const sigset_t reload_signal = plan.policy_file.empty() ? sigset_t{} : block_reload_signal();
  std::unique_ptr<PolicyRuntime> policies;
  if (!plan.policy_file.empty()) {
    auto loaded = PolicyRuntime::load(
        plan.policy_file, [](const std::string& line) { std::cerr << "skewscope agent: " << line << std::endl; },
        plan.tenants);
    if (!loaded) return usage_error("--policy-file " + loaded.error);
    policies = std::move(*loaded);
  }

  if (Status tracefs = ensure_tracefs(); !tracefs) return runtime_error("tracefs: " + tracefs.error);

  SharedCore core(AgentCore(std::move(*plan.domains), plan.core));
  {
    auto setup = core.lock();
    const std::int64_t start = monotonic_now_ns();
    for (const auto& sim : plan.simulations)
      setup->simulated_clocks().set(*setup->domains().find(sim.domain), sim.offset_ns, sim.drift_ppm, start);
    setup->clock_mapping().sample_now();
  }
  std::unique_ptr<exchange::KafkaExchange> kafka;
  if (plan.exchange) {
    plan.exchange->tenants = policies ? policies->tenants() : plan.tenants;  // docs/tenants.md
    core.lock()->enable_exchange(exchange::CoreExchangeConfig{plan.exchange->sample_one_in});
    auto created = exchange::KafkaExchange::create(*plan.exchange, core);
    if (!created) return usage_error("--exchange: " + created.error);
    kafka = std::move(*created);
  }

  clocks::ClockMonitor clock_monitor(plan.clocks);

  // Which capture families run, with which candidate, or why not: written here before the
  // threads start, read by the HTTP thread's reports (no lock needed: never written after).
  FamilyStatuses families{};
  auto log_line = [](const std::string& line) { std::cerr << "skewscope agent: " << line << std::endl; };
  // An optional family that does not run is said in the log, the status and /metrics.
  auto set_family = [&](CaptureFamily f, FamilyStatus status) {
    if (!status.up)
      log_line(std::string("capture family ") + family_name(f) + " is off (" + family_reason_name(status.reason) +
               "): " + status.detail);
    status_of(families, f) = std::move(status);
  };
  auto family_off = [&](CaptureFamily f, FamilyReason reason, const std::string& detail) {
    set_family(f, {false, reason, "", detail});
  };
  // The HTTP thread reads only the core (the source's counters are copied into it by the capture
  // thread), so the capture can be destroyed while the server still answers.
  std::unique_ptr<TcpSyscallCapture> capture;
  std::unique_ptr<WireRuntime> wire;  // --wire-timestamps
  // --otlp-endpoint: created before the server, whose reports read its counters.
  std::unique_ptr<otlp::OtlpExporter> otlp_exporter;
  if (plan.otlp) {
    auto created = otlp::OtlpExporter::create(*plan.otlp, kVersion);
    if (!created) return usage_error("--otlp-endpoint: " + created.error);
    otlp_exporter = std::move(*created);
  }
  auto take_report = [&] {
    clocks::ClockSnapshot clock_snapshot = clock_monitor.snapshot();
    auto locked = core.lock();
    const std::int64_t now = monotonic_now_ns();
    AgentReport report = locked->report(now);
    report.capture_families = families;
    report.clocks = std::move(clock_snapshot);
    add_diagnosis(report, locked->diagnosis_history(), now);
    if (kafka && report.exchange) kafka->fill(*report.exchange);
    if (otlp_exporter) report.otlp = otlp_exporter->report();
    return report;
  };
  HttpApi api(take_report, kVersion);
  SpanTrust span_trust;
  std::unique_ptr<PolicyWebhooks> webhooks;
  add_policy_routes(api, policies.get());
  if (policies) {
    span_trust = [&policies](const std::string& src, const std::string& dst, Transport t) {
      return policies->trusted(src, dst, t);
    };
    // Made once the port is bound (below, before the server starts): the alerts link to it.
    api.add_metrics([&webhooks](std::string& out) {
      if (webhooks) webhooks->append_metrics(out);
    });
  }
  add_analysis_routes(api, core, plan.enable_spans_api, span_trust);
  // --peer-agent: the live page's merged view of several agents (docs/live-page.md).
  std::unique_ptr<PeerAgents> peers;
  if (!plan.peer_agents.empty()) {
    auto made = PeerAgents::create(plan.peer_agents);
    if (!made) return usage_error(made.error);
    peers = std::move(*made);
    add_peer_routes(
        api, *peers, [&take_report] { return status_json(take_report()); },
        [&api, &plan] { return plan.listen.host + ":" + std::to_string(api.port()); });
  }
  if (Status web = api.use_web_config_file(plan.web_config_file); !web) return usage_error(web.error);
  // The tenants: --tenant's, or the policy file's tenants: section (one of the two; docs/tenants.md).
  auto tenant_access = plan_tenant_access(policies ? policies->tenants() : std::move(plan.tenants), plan.tenant_users,
                                          api.basic_auth_users());
  if (!tenant_access) return usage_error(tenant_access.error);
  api.use_tenants(std::move(*tenant_access));
  if (Status bound = api.bind(plan.listen.host, plan.listen.port); !bound) return runtime_error(bound.error);
  ControlSocket control([&](const std::string& line) { return handle_control(line, core); });
  if (Status bound = control.bind(plan.control_socket); !bound) return runtime_error(bound.error);

  // Before the programs load: a namespace that cannot be read fails the start without attaching,
  // and the dump it asks for is under way while they load.
  std::unique_ptr<translate::ConntrackWatch> conntrack;
  if (!plan.nat_namespaces.empty()) {
    auto watch = translate::ConntrackWatch::open(plan.nat_namespaces);
    if (!watch) return runtime_error("--nat-conntrack: " + watch.error);
    conntrack = std::move(*watch);
    core.lock()->enable_nat(translate::NatLimits{});
  }

  auto probed = probe_kernel_features();
  if (!probed) return usage_error(probed.error);
  const KernelFeatures& features = *probed;
  for (const auto& note : features.notes)
    if (note.find(kHideFeaturesEnv) != std::string::npos) log_line("kernel feature " + note);
  // TCP is mandatory; payload capture rides on its syscall programs: if no variant that can copy
  // payloads loads, the agent runs without them (the family off, with the reason).
  const Result<std::uint32_t> send_slots = send_slots_from(std::getenv(kSendSlotsEnv));
  if (!send_slots) return usage_error(send_slots.error);
  auto opened = TcpSyscallCapture::open_best(features, plan.payload, *send_slots);
  if (!opened && plan.payload.max_bytes > 0) {
    family_off(CaptureFamily::payload, opened.error.reason, opened.error.message);
    plan.payload.max_bytes = 0;
    opened = TcpSyscallCapture::open_best(features, plan.payload, *send_slots);
  }
  if (!opened) return runtime_error(opened.error.message);
  capture = std::move(*opened);
  {
    std::string detail = "variant " + capture->variant();
    for (const auto& [variant, why] : capture->refused()) detail += "; " + variant + " refused at load: " + why;
    set_family(CaptureFamily::tcp, {true, FamilyReason::running, capture->variant(), detail});
    if (plan.payload.max_bytes > 0)
      set_family(CaptureFamily::payload, {true, FamilyReason::running, capture->variant(), detail});
  }
  std::unique_ptr<PayloadRingReader> payload_reader;
  if (plan.payload.max_bytes > 0) {
    auto reader = PayloadRingReader::open(capture->payload_ring_fd(), capture->payload_counters_fd(),
                                          capture->payload_idle_flag());
    if (!reader) return runtime_error(reader.error);
    payload_reader = std::move(*reader);
    core.lock()->enable_payload(plan.payload.max_bytes, MessagePairingLimits{});
  }
  core.lock()->set_own_endpoint(static_cast<std::uint16_t>(api.port()), own_netns_inode());
  if (!plan.wire.interfaces.empty()) {
    WireRuntimeConfig wire_config{plan.wire,
                                  {plan.core.window_ns, plan.core.limits, core.lock()->estimator().config()}};
    auto started = WireRuntime::start(std::move(wire_config), core, features);
    if (!started) return runtime_error("--wire-timestamps: " + started.error);
    wire = std::move(started->runtime);
    set_family(CaptureFamily::wire, started->wire);
    set_family(CaptureFamily::wire_send, started->send);
  }
  std::unique_ptr<RdmaCapture> rdma;
  if (plan.rdma) {
    LoadableCandidate chosen = choose_loadable_candidate(features, rdma_candidates(), {}, [&](const FamilyCandidate&) {
      auto opened_rdma =
          RdmaCapture::open([](const std::string& line) { std::cerr << "skewscope agent: " << line << std::endl; });
      if (!opened_rdma) return Status::fail(opened_rdma.error);
      rdma = std::move(*opened_rdma);
      return Status::ok();
    });
    set_family(CaptureFamily::rdma, chosen.status);
  }

  std::atomic<bool> stopping{false};
  std::atomic<bool> capture_failed{false};
  // Named for `top -H` and the tests that count a loop's wake-ups (/proc/PID/task/TID/comm).
  std::thread capture_thread([&] {
    pthread_setname_np(pthread_self(), "skewscope-tcp");
    Status end = run_capture_loop(
        *capture, core, stopping, TcpSyscallCapture::kMaxBatch, conntrack.get(),
        capture_idle_wait(plan.exchange.has_value(), conntrack != nullptr, plan.core.estimate_interval_ns));
    if (end) return;
    std::cerr << "skewscope agent: capture failed: " << end.error << "; every pair is now unknown; exiting in "
              << format_duration_ns(plan.capture_grace_ns) << std::endl;
    capture_failed = true;
  });
  std::thread payload_thread([&] {
    if (!payload_reader) return;
    pthread_setname_np(pthread_self(), "skewscope-pay");
    Status end = run_payload_loop(*payload_reader, core, stopping, conntrack.get());
    if (!end) std::cerr << "skewscope agent: payload capture stopped: " << end.error << std::endl;
  });
  std::thread rdma_thread([&] {
    if (!rdma) return;
    pthread_setname_np(pthread_self(), "skewscope-rdma");
    Status end = run_rdma_loop(*rdma, core, stopping);
    if (end) return;
    std::cerr << "skewscope agent: RDMA capture failed: " << end.error << "; exiting in "
              << format_duration_ns(plan.capture_grace_ns) << std::endl;
    capture_failed = true;
  });
  // The OTLP feed reads the core's new spans under the lock and hands them to the exporter, whose
  // own thread does the I/O: a slow or dead receiver costs the capture nothing.
  std::thread otlp_thread([&] {
    if (!otlp_exporter) return;
    otlp_exporter->start();
    run_otlp_loop(core, *otlp_exporter, stopping, span_trust, take_report);
  });
  // The clock sources are polled on their own thread: a ptp4l that does not answer costs that
  // thread its reply timeout, never the capture.
  ClockThread clock_thread(clock_monitor, core, kafka.get());
  // A step of CLOCK_REALTIME has both mappings read the clocks at once (runtime/clock_step_watch.hpp).
  auto step_watch = ClockStepWatch::start([&core, exchange = kafka.get()] {
    core.lock()->clock_stepped();
    if (exchange) exchange->sample_clocks();
  });
  if (step_watch) {
    core.lock()->watch_clock_steps();
  } else {
    log_line("clock steps are not watched (" + step_watch.error + "): a step is placed at the mappings' next reading");
  }
  if (kafka) {
    // Said at every start: an unsigned exchange lets anyone with write access to the topic
    // forge spans (docs/security.md); skewscope_exchange_insecure says it too.
    if (plan.exchange->insecure) {
      log_line(
          "WARNING: the exchange is INSECURE (--exchange-insecure): records are neither signed nor verified; "
          "anyone who can write to topic " +
          plan.exchange->topic + " can forge halves and domains");
    } else {
      const auto& key = plan.exchange->keys->keys.front();
      log_line("exchange records signed with key " + exchange::key_id_hex(key.id) + " (" + key.source + "), " +
               std::to_string(plan.exchange->keys->keys.size()) + " key(s) accepted");
    }
    kafka->start();  // reads this agent's addresses before returning
  }
  if (policies) {
    const std::string host = core.lock()->domains().name(0);
    webhooks = std::make_unique<PolicyWebhooks>(
        host, "http://" + host + ":" + std::to_string(api.port()) + "/api/v1/policies");
    webhooks->start();
    policies->start(take_report, reload_signal, webhooks.get());
  }
  if (peers) peers->start();
  api.start();
  control.start();
  const std::size_t domain_count = core.lock()->domains().size();
  std::cout << "skewscope agent " << kVersion << ": listening on " << plan.listen.host << ":" << api.port()
            << ", control socket " << plan.control_socket << ", " << capture->attached().size()
            << " programs attached (variant " << capture->variant() << "), " << domain_count << " domains" << std::endl;
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
    capture->interrupt_wait();  // an idle loop may be in a long wait (runtime/ring_drain.hpp)
    if (payload_reader) payload_reader->interrupt_wait();
    clock_thread.request_stop();
    if (step_watch) step_watch->reset();
    if (policies) policies->stop();          // at most one evaluation: it takes reports from the core
    if (webhooks) webhooks->request_stop();  // a POST in flight ends while the BPF programs detach
    capture_thread.join();
    payload_thread.join();
    payload_reader.reset();
    rdma_thread.join();
    otlp_thread.join();
    if (otlp_exporter) otlp_exporter->stop();
    const std::int64_t detach_start = monotonic_now_ns();
    capture.reset();
    if (wire) wire->stop();
    rdma.reset();
    if (kafka) kafka->stop();
    std::cerr << "skewscope agent: BPF programs detached in "
              << format_duration_ns((monotonic_now_ns() - detach_start) / 1'000'000 * 1'000'000) << std::endl;
    if (webhooks) webhooks->stop();
    api.stop();
    if (peers) peers->stop();
    control.stop();
    clock_thread.join();
    torn_down = true;
  });
  wait_for_teardown(stop_signals, torn_down);
  teardown.join();
  return exit_code;
}

}  // namespace skewscope
