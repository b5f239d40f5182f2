#include "client/explain_command.hpp"

#include <future>
#include <iostream>

#include "client/client_commands.hpp"
#include "client/explain.hpp"

namespace skewscope {

int run_explain(const std::vector<std::string>& agent_urls, const AgentConnectionOptions& connection, bool json) {
  const std::vector<std::string> urls = agent_urls.empty() ? std::vector<std::string>{kDefaultAgentUrl} : agent_urls;
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const auto& url : urls) {
    auto client = AgentClient::create(url, connection);
    if (!client) {
      std::cerr << "skewscope explain: " << client.error << "\n";
      return 2;
    }
    clients.push_back(std::move(*client));
  }
  // All agents at once: one dead agent costs one timeout.
  std::vector<std::future<Result<std::string, AgentError>>> pending;
  for (auto& c : clients)
    pending.push_back(std::async(std::launch::async, [&c] { return c->get("/api/v1/status", {}, 5); }));
  std::vector<nlohmann::json> statuses;
  bool unreachable = false;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    auto body = pending[i].get();
    if (!body) {
      std::cerr << "skewscope explain: " << body.error.message << "\n";
      unreachable = true;
      continue;
    }
    auto parsed = nlohmann::json::parse(*body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      std::cerr << "skewscope explain: agent at " << clients[i]->url() << " sent invalid JSON\n";
      unreachable = true;
      continue;
    }
    statuses.push_back(std::move(parsed));
  }
  if (statuses.empty()) return 3;  // no agent answered: no verdict either way
  auto report = diagnosis_from_statuses(statuses);
  if (!report) {
    std::cerr << "skewscope explain: " << report.error << "\n";
    return 3;
  }
  if (json)
    std::cout << explain_json(*report).dump(2) << "\n";
  else
    std::cout << explain_text(*report);
  if (unreachable) return 3;
  return report->incidents > 0 ? 1 : 0;
}

}  // namespace skewscope
