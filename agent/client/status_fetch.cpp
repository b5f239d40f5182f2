#include "client/status_fetch.hpp"

#include <functional>
#include <future>

#include "client/explain_merged_status.hpp"

namespace skewscope {

AgentStatus fetch_status(AgentClient& agent, int timeout_seconds) {
  auto body = agent.get("/api/v1/status", {}, timeout_seconds);
  if (!body) return {agent.url(), std::nullopt, body.error.message};
  auto parsed = nlohmann::json::parse(*body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object())
    return {agent.url(), std::nullopt, "agent at " + agent.url() + " sent invalid JSON"};
  return {agent.url(), std::move(parsed), {}};
}

std::vector<AgentStatus> fetch_statuses(const std::vector<std::unique_ptr<AgentClient>>& agents, int timeout_seconds) {
  std::vector<std::future<AgentStatus>> pending;
  for (const auto& agent : agents)
    pending.push_back(std::async(std::launch::async, fetch_status, std::ref(*agent), timeout_seconds));
  std::vector<AgentStatus> statuses;
  for (auto& answer : pending) statuses.push_back(answer.get());
  return statuses;
}

nlohmann::json merged_view(const std::vector<AgentStatus>& statuses) {
  nlohmann::json merged = merge_statuses(statuses);
  add_merged_diagnosis(merged, statuses);
  return merged;
}

}  // namespace skewscope
