#include "cli/client_commands.hpp"
#include "cli/status_merge.hpp"
#include "cli/status_table.hpp"
#include "cli/wire_doctor.hpp"

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <thread>

#include "api/control_socket.hpp"
#include "capture/features.hpp"
#include "capture/tracefs.hpp"
#include "clocks/clock_monitor.hpp"
#include "domains/domain_spec.hpp"
#include "domains/duration.hpp"
#include "estimate/whatif.hpp"

namespace skewscope {
namespace {

struct Fetched {
  std::optional<nlohmann::json> status;
  std::string error;
};

Fetched fetch_status(const std::string& url) {
  httplib::Client client(url);
  if (!client.is_valid()) return {std::nullopt, "invalid agent URL '" + url + "'"};
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  auto res = client.Get("/api/v1/status");
  if (!res) return {std::nullopt, "cannot reach the agent at " + url + ": " + httplib::to_string(res.error())};
  if (res->status != 200) return {std::nullopt, "agent at " + url + " answered HTTP " + std::to_string(res->status)};
  auto parsed = nlohmann::json::parse(res->body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return {std::nullopt, "agent at " + url + " sent invalid JSON"};
  return {parsed, {}};
}

// All agents at once, so one slow or dead agent costs one timeout, not one per agent.
nlohmann::json fetch_merged(const std::vector<std::string>& urls) {
  std::vector<std::future<Fetched>> pending;
  for (const auto& url : urls) pending.push_back(std::async(std::launch::async, fetch_status, url));
  std::vector<AgentStatus> statuses;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    Fetched f = pending[i].get();
    statuses.push_back({urls[i], std::move(f.status), std::move(f.error)});
  }
  return merge_statuses(statuses);
}

std::string render_merged(nlohmann::json merged) {
  if (merged["window_seconds"].is_null()) merged.erase("window_seconds");  // agents disagree: "?"
  return render_status_table(merged) + render_agents_section(merged);
}

std::optional<std::int64_t> parse_interval(const std::string& text) {
  auto interval = parse_duration_ns(text);
  if (!interval) interval = parse_duration_ns(text + "s");  // vmstat style: a bare number means seconds
  if (!interval || *interval <= 0) return std::nullopt;
  return *interval;
}

// top's INTERVAL and COUNT, or nullopt after saying what is wrong (a usage error).
std::optional<std::int64_t> top_interval(const std::string& interval_text, int count) {
  auto interval = parse_interval(interval_text);
  if (!interval) {
    std::cerr << "skewscope top: interval '" << interval_text << "' must be a positive duration (e.g. 1s, 500ms)\n";
    return std::nullopt;
  }
  if (count < 0) {
    std::cerr << "skewscope top: COUNT must be positive\n";
    return std::nullopt;
  }
  return interval;
}

}  // namespace

int run_status(const std::string& url, bool json) {
  Fetched f = fetch_status(url);
  if (!f.status) {
    std::cerr << "skewscope status: " << f.error << "\n";
    return 3;
  }
  if (json) {
    std::cout << f.status->dump(2) << "\n";
  } else {
    std::cout << render_status_table(*f.status);
  }
  // Health null: the agent cannot know (capture down, or halves lost in the window): not healthy.
  const nlohmann::json health = f.status->value("health", nlohmann::json());
  return health.is_number() && health == 1 ? 0 : 1;
}

int run_top(const std::string& url, const std::string& interval_text, int count, bool once, bool json) {
  auto interval = top_interval(interval_text, count);
  if (!interval) return 2;
  if (once) count = 1;
  const bool clear = !json && isatty(STDOUT_FILENO);
  for (int i = 0; count == 0 || i < count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(*interval));
    Fetched f = fetch_status(url);
    if (!f.status) {
      std::cerr << "skewscope top: " << f.error << "\n";
      return 3;
    }
    if (json) {
      std::cout << f.status->dump() << std::endl;  // NDJSON: one status per line
    } else {
      if (clear) std::cout << "\033[H\033[2J";
      std::cout << render_status_table(*f.status) << std::endl;
    }
  }
  return 0;
}

int run_status(const std::vector<std::string>& urls, bool json) {
  if (urls.empty()) return run_status(std::string(kDefaultAgentUrl), json);
  if (urls.size() == 1) return run_status(urls.front(), json);
  nlohmann::json merged = fetch_merged(urls);
  if (json) {
    std::cout << merged.dump(2) << "\n";
  } else {
    std::cout << render_merged(merged);
  }
  int code = merged_status_exit_code(merged);
  if (code == 3) std::cerr << "skewscope status: an agent is unreachable (see the agents list)\n";
  return code;
}

int run_top(const std::vector<std::string>& urls, const std::string& interval_text, int count, bool once, bool json) {
  if (urls.empty()) return run_top(std::string(kDefaultAgentUrl), interval_text, count, once, json);
  if (urls.size() == 1) return run_top(urls.front(), interval_text, count, once, json);
  auto interval = top_interval(interval_text, count);
  if (!interval) return 2;
  if (once) count = 1;
  const bool clear = !json && isatty(STDOUT_FILENO);
  bool unreachable = false;
  for (int i = 0; count == 0 || i < count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(*interval));
    nlohmann::json merged = fetch_merged(urls);
    // With several agents one of them being away is part of the picture (a restart, a hand-over):
    // it is shown, and the table keeps refreshing.
    unreachable = false;
    for (const auto& agent : merged["agents"]) unreachable = unreachable || agent["reachable"] != true;
    if (json) {
      std::cout << merged.dump() << std::endl;  // NDJSON: one merged status per line
    } else {
      if (clear) std::cout << "\033[H\033[2J";
      std::cout << render_merged(merged) << std::endl;
    }
  }
  return unreachable ? 3 : 0;
}

int run_simulate(const std::string& spec, const std::string& control_socket) {
  auto sim = parse_clock_simulation(spec);
  if (!sim) {
    std::cerr << "skewscope simulate: " << sim.error << "\n";
    return 2;
  }
  bool reached = false;
  std::string reply = control_request(control_socket, "simulate " + spec, reached);
  if (reply.rfind("ok", 0) == 0) {
    std::cout << reply << "\n";
    return 0;
  }
  std::cerr << "skewscope simulate: " << reply << "\n";
  return reached ? 1 : 3;
}

int run_doctor() {
  const Status tracefs = ensure_tracefs();
  KernelFeatures k = probe_kernel_features();
  std::cout << "kernel " << k.kernel_release << "\n\nfeatures:\n";
  for (int i = 0; i < static_cast<int>(Feature::count_); ++i) {
    auto f = static_cast<Feature>(i);
    std::cout << "  " << (k[f] ? "yes " : "no  ") << feature_name(f) << "\n";
  }
  if (!tracefs) std::cout << "  (tracefs: " << tracefs.error << ")\n";
  for (const auto& note : k.notes) std::cout << "  note: " << note << "\n";
  std::cout << "\nhooks:\n";
  int chosen = 0;
  auto choices = choose_hooks(k, tcp_hook_candidates());
  for (const auto& c : choices) {
    chosen += c.chosen;
    std::cout << "  " << (c.chosen ? "use  " : "skip ") << c.candidate.program << "  (" << c.candidate.hook << ", "
              << c.candidate.tracepoint << ")" << (c.chosen ? "" : "  -- " + c.reason) << "\n";
  }
  std::cout << "\n" << chosen << " of " << choices.size() << " programs usable\n";
  std::string variant = chosen_variant(choices);
  std::cout << "variant: " << (variant.empty() ? "none" : variant) << "\n";
  // The agent passes sock_tp over when --payload-bytes is set: say what it loads then.
  std::string with_payload = chosen_variant(choose_hooks(k, tcp_hook_candidates(), true));
  std::cout << "variant with --payload-bytes: " << (with_payload.empty() ? "none" : with_payload) << "\n";
  print_wire_doctor(std::cout);
  return variant.empty() ? 1 : 0;  // without an entry program nothing is captured
}

int run_clocks(const std::vector<std::string>& ptp4l_sockets, bool json) {
  clocks::ClockConfig config;
  config.ptp4l_sockets = ptp4l_sockets;
  clocks::ClockMonitor monitor(config);
  monitor.poll();
  // ptp4l's sync age and bound need a second reading: the first only shows where it stands.
  if (!monitor.snapshot().ptp.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    monitor.poll();
  }
  auto snapshot = monitor.snapshot();
  if (json) {
    std::cout << clocks::to_json(snapshot).dump(2) << "\n";
  } else {
    std::cout << clocks::render_table(snapshot);
  }
  return 0;
}

int run_whatif(const std::string& url, const std::string& clock_error, bool json) {
  auto models = estimate::parse_error_models(clock_error);
  if (!models) {
    std::cerr << "skewscope whatif: " << models.error << "\n";
    return 2;
  }
  httplib::Client client(url);
  if (!client.is_valid()) {
    std::cerr << "skewscope whatif: invalid agent URL '" << url << "'\n";
    return 2;
  }
  client.set_connection_timeout(2);
  client.set_read_timeout(10);
  httplib::Params params{{"clock_error", clock_error}};
  if (!json) params.emplace("format", "text");
  auto res = client.Get("/api/v1/whatif", params, httplib::Headers{});
  if (!res) {
    std::cerr << "skewscope whatif: cannot reach the agent at " << url << ": " << httplib::to_string(res.error())
              << "\n";
    return 3;
  }
  if (res->status != 200) {
    std::cerr << "skewscope whatif: agent answered HTTP " << res->status << ": " << res->body;
    return 1;
  }
  std::cout << res->body;
  return 0;
}

}  // namespace skewscope
