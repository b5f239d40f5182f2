#include "runtime/peer_agents.hpp"

#include <chrono>

#include "client/status_fetch.hpp"

namespace skewscope {

Result<std::unique_ptr<PeerAgents>> PeerAgents::create(const std::vector<std::string>& urls,
                                                       const EnvironmentLookup& environment) {
  using R = Result<std::unique_ptr<PeerAgents>>;
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const auto& url : urls) {
    auto client = AgentClient::create(url, AgentConnectionOptions{}, environment);
    if (!client) return R::fail("--peer-agent " + url + ": " + client.error);
    clients.push_back(std::move(*client));
  }
  return R::ok(std::unique_ptr<PeerAgents>(new PeerAgents(std::move(clients))));
}

PeerAgents::PeerAgents(std::vector<std::unique_ptr<AgentClient>> clients) : clients_(std::move(clients)) {
  for (const auto& c : clients_) latest_.push_back({c->url(), std::nullopt, "not asked yet"});
}

PeerAgents::~PeerAgents() { stop(); }

void PeerAgents::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void PeerAgents::stop() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeerAgents::poll_once() {
  auto answers = fetch_statuses(clients_, kTimeoutSeconds);
  std::lock_guard guard(mutex_);
  latest_ = std::move(answers);
}

void PeerAgents::run() {
  for (;;) {
    poll_once();
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(kPeriodMs), [this] { return stopping_; })) return;
  }
}

nlohmann::json PeerAgents::merged(nlohmann::json own_status, const std::string& own_url) const {
  std::vector<AgentStatus> statuses;
  statuses.push_back({own_url, std::move(own_status), {}});
  {
    std::lock_guard guard(mutex_);
    statuses.insert(statuses.end(), latest_.begin(), latest_.end());
  }
  return merged_view(statuses);
}

void add_peer_routes(HttpApi& api, const PeerAgents& peers, std::function<nlohmann::json()> own_status,
                     std::function<std::string()> own_url) {
  api.add_route("/api/v1/merged",
                [&peers, own_status = std::move(own_status), own_url = std::move(own_url)](const HttpApi::Query&) {
                  return HttpReply{200, peers.merged(own_status(), own_url()).dump() + "\n", "application/json"};
                });
}

}  // namespace skewscope
