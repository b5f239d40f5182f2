#include "client/client_commands.hpp"
#include "client/agent_client.hpp"
#include "client/status_fetch.hpp"
#include "client/status_merge.hpp"
#include "client/status_table.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "api/control_socket.hpp"
#include "clocks/clock_monitor.hpp"
#include "domains/domain_spec.hpp"
#include "domains/duration.hpp"
#include "estimate/whatif.hpp"

namespace skewscope {
namespace {

constexpr int kStatusTimeoutSeconds = 5;

// One configured client per --agent, or nullopt after saying which flag or URL is wrong (usage).
std::optional<std::vector<std::unique_ptr<AgentClient>>> make_clients(const char* command,
                                                                      const std::vector<std::string>& urls,
                                                                      const AgentConnectionOptions& connection) {
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const auto& url : urls) {
    auto client = AgentClient::create(url, connection);
    if (!client) {
      std::cerr << "skewscope " << command << ": " << client.error << "\n";
      return std::nullopt;
    }
    clients.push_back(std::move(*client));
  }
  return clients;
}

nlohmann::json fetch_merged(const std::vector<std::unique_ptr<AgentClient>>& agents) {
  return merged_view(fetch_statuses(agents, kStatusTimeoutSeconds));
}

std::string render_merged(nlohmann::json merged) {
  if (merged["window_seconds"].is_null()) merged.erase("window_seconds");  // agents disagree: "?"
  nlohmann::json table = merged;
  table.erase("health_reason");  // the agents section says it, with each agent's part
  return render_status_table(table) + render_agents_section(merged);
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

int run_status(const std::string& url, const AgentConnectionOptions& connection, bool json) {
  auto agent = make_clients("status", {url}, connection);
  if (!agent) return 2;
  AgentStatus f = fetch_status(*agent->front(), kStatusTimeoutSeconds);
  if (!f.status) {
    std::cerr << "skewscope status: " << f.error << "\n";
    return 3;
  }
  if (json) {
    std::cout << f.status->dump(2) << "\n";
  } else {
    std::cout << render_status_table(*f.status);
  }
  // Not healthy unless every pair is vouched for: health null (capture down, halves lost or
  // unpaired, no span in a pair's window) exits 1 like a violation.
  return status_exit_code(*f.status);
}

int run_top(const std::string& url, const AgentConnectionOptions& connection, const std::string& interval_text,
            int count, bool once, bool json) {
  auto interval = top_interval(interval_text, count);
  if (!interval) return 2;
  auto agent = make_clients("top", {url}, connection);
  if (!agent) return 2;
  if (once) count = 1;
  const bool clear = !json && isatty(STDOUT_FILENO);
  for (int i = 0; count == 0 || i < count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(*interval));
    AgentStatus f = fetch_status(*agent->front(), kStatusTimeoutSeconds);
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

int run_status(const std::vector<std::string>& urls, const AgentConnectionOptions& connection, bool json) {
  if (urls.empty()) return run_status(std::string(kDefaultAgentUrl), connection, json);
  if (urls.size() == 1) return run_status(urls.front(), connection, json);
  auto agents = make_clients("status", urls, connection);
  if (!agents) return 2;
  nlohmann::json merged = fetch_merged(*agents);
  if (json) {
    std::cout << merged.dump(2) << "\n";
  } else {
    std::cout << render_merged(merged);
  }
  int code = merged_status_exit_code(merged);
  if (code == 3) std::cerr << "skewscope status: an agent is unreachable (see the agents list)\n";
  return code;
}

int run_top(const std::vector<std::string>& urls, const AgentConnectionOptions& connection,
            const std::string& interval_text, int count, bool once, bool json) {
  if (urls.empty()) return run_top(std::string(kDefaultAgentUrl), connection, interval_text, count, once, json);
  if (urls.size() == 1) return run_top(urls.front(), connection, interval_text, count, once, json);
  auto interval = top_interval(interval_text, count);
  if (!interval) return 2;
  auto agents = make_clients("top", urls, connection);
  if (!agents) return 2;
  if (once) count = 1;
  const bool clear = !json && isatty(STDOUT_FILENO);
  bool unreachable = false;
  for (int i = 0; count == 0 || i < count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(*interval));
    nlohmann::json merged = fetch_merged(*agents);
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

int run_whatif(const std::string& url, const AgentConnectionOptions& connection, const std::string& clock_error,
               bool json) {
  auto models = estimate::parse_error_models(clock_error);
  if (!models) {
    std::cerr << "skewscope whatif: " << models.error << "\n";
    return 2;
  }
  auto agent = make_clients("whatif", {url}, connection);
  if (!agent) return 2;
  std::multimap<std::string, std::string> params{{"clock_error", clock_error}};
  if (!json) params.emplace("format", "text");
  auto body = agent->front()->get("/api/v1/whatif", params, 10);
  if (!body) {
    // The agent answered but refused the model: its reason. No answer, TLS or credentials: no verdict.
    if (body.error.kind == AgentFailure::http) {
      std::cerr << "skewscope whatif: " << body.error.message << ": " << body.error.body;
      return 1;
    }
    std::cerr << "skewscope whatif: " << body.error.message << "\n";
    return 3;
  }
  std::cout << *body;
  return 0;
}

}  // namespace skewscope
