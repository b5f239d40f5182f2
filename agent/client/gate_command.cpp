#include "client/gate_command.hpp"

#include <future>
#include <iostream>
#include <thread>

#include "capture/clock_mapping.hpp"
#include "client/client_commands.hpp"
#include "client/gate_verdict.hpp"
#include "domains/duration.hpp"

namespace skewscope {
namespace {

GateAnswer ask(AgentClient& agent, const std::string& policy) {
  auto body = agent.get("/api/v1/policies", {{"policy", policy}}, 5);
  if (!body) {
    const bool unreachable = body.error.kind != AgentFailure::http;
    std::string why = body.error.message;
    if (body.error.kind == AgentFailure::http && !body.error.body.empty()) {
      auto said = nlohmann::json::parse(body.error.body, nullptr, false);
      if (said.is_object() && said.contains("error") && said["error"].is_string()) why = said["error"];
    }
    return {agent.url(), std::nullopt, unreachable, why};
  }
  auto parsed = nlohmann::json::parse(*body, nullptr, false);
  if (parsed.is_discarded()) return {agent.url(), std::nullopt, false, "sent invalid JSON"};
  return {agent.url(), parsed, false, ""};
}

}  // namespace

int run_gate(const std::string& policy, const std::vector<std::string>& agent_urls,
             const AgentConnectionOptions& connection, const std::string& wait) {
  std::int64_t wait_ns = 0;
  if (!wait.empty()) {
    auto parsed = parse_duration_ns(wait);
    if (!parsed || *parsed < 0) {
      std::cerr << "skewscope gate: --wait: " << (parsed ? "must not be negative" : parsed.error) << "\n";
      return 2;
    }
    wait_ns = *parsed;
  }
  std::vector<std::unique_ptr<AgentClient>> agents;
  for (const auto& url : agent_urls.empty() ? std::vector<std::string>{kDefaultAgentUrl} : agent_urls) {
    auto client = AgentClient::create(url, connection);
    if (!client) {
      std::cerr << "skewscope gate: " << client.error << "\n";
      return 2;
    }
    agents.push_back(std::move(*client));
  }
  const std::int64_t deadline = monotonic_now_ns() + wait_ns;
  for (;;) {
    const std::int64_t round_start = monotonic_now_ns();
    // Every agent at once: one dead agent costs one timeout per round, not one each.
    std::vector<std::future<GateAnswer>> pending;
    for (auto& agent : agents) pending.push_back(std::async(std::launch::async, ask, std::ref(*agent), policy));
    std::vector<GateAnswer> answers;
    for (auto& p : pending) answers.push_back(p.get());
    GateResult result = decide_gate(policy, answers);
    if (result.exit == GateExit::met || monotonic_now_ns() >= deadline) {
      for (const auto& line : result.lines) std::cout << line << "\n";
      static const char* names[] = {"met", "violated", "", "unreachable", "unknown"};
      std::cout << "policy " << policy << ": " << names[static_cast<int>(result.exit)] << std::endl;
      return static_cast<int>(result.exit);
    }
    const std::int64_t next = std::min(round_start + 1'000'000'000, deadline);
    if (next > monotonic_now_ns()) std::this_thread::sleep_for(std::chrono::nanoseconds(next - monotonic_now_ns()));
  }
}

}  // namespace skewscope
