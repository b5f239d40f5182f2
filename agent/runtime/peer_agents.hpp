// --peer-agent URL (repeatable): the other agents whose pairs the live page shows beside this
// agent's (docs/live-page.md, "Several agents"). A thread of its own asks each peer for its
// /api/v1/status once a second, all at once, with the client code of `skewscope status --agent`
// (TLS trust from SSL_CERT_FILE / SSL_CERT_DIR or the system, basic auth from the URL's userinfo);
// GET /api/v1/merged merges this agent's own status with the peers' newest answers by the same
// code as `skewscope status --agent A --agent B` (client/status_fetch.hpp). A peer that is slow or down
// costs only that thread its timeout: the route never waits for a peer.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/http_api.hpp"
#include "client/agent_client.hpp"
#include "client/status_merge.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

class PeerAgents {
 public:
  // A URL that is not one (bad scheme, half credentials) is an error naming it: a usage error.
  static Result<std::unique_ptr<PeerAgents>> create(const std::vector<std::string>& urls,
                                                    const EnvironmentLookup& environment = ::getenv);
  ~PeerAgents();
  PeerAgents(const PeerAgents&) = delete;
  PeerAgents& operator=(const PeerAgents&) = delete;

  void start();
  void stop();
  // One poll of every peer now, on the caller's thread (the thread's loop, and tests).
  void poll_once();

  // This agent's status first (its report kept on a tie, as the first --agent is), then each
  // peer's newest answer or why there is none: merged_view's shape (pairs[].agent, agents[]), the
  // diagnosis triangulated again over every agent's pairs, as `status --agent A --agent B` shows.
  nlohmann::json merged(nlohmann::json own_status, const std::string& own_url) const;

  static constexpr int kTimeoutSeconds = 2;
  static constexpr int kPeriodMs = 1000;

 private:
  explicit PeerAgents(std::vector<std::unique_ptr<AgentClient>> clients);
  void run();

  std::vector<std::unique_ptr<AgentClient>> clients_;
  mutable std::mutex mutex_;
  std::vector<AgentStatus> latest_;  // one per peer, in --peer-agent order
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// GET /api/v1/merged: `own_status()` (this agent's /api/v1/status JSON) merged with the peers'.
// Registered only with peers: without them the page reads /api/v1/status (a 404 here says so).
void add_peer_routes(HttpApi& api, const PeerAgents& peers, std::function<nlohmann::json()> own_status,
                     std::function<std::string()> own_url);

}  // namespace skewscope
