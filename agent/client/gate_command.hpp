// `skewscope gate --policy NAME [--agent URL]... [--wait DURATION]`: asks each agent for the
// policy's verdict, for a pipeline, a cron job or an autonomous agent to call before acting on
// timestamp order. Exit 0 met, 1 violated, 2 usage, 3 unreachable, 4 unknown (client/gate_verdict.hpp).
// --wait polls once a second until every agent says met or the duration ends.
#pragma once

#include <string>
#include <vector>

#include "client/agent_client.hpp"

namespace skewscope {

int run_gate(const std::string& policy, const std::vector<std::string>& agent_urls,
             const AgentConnectionOptions& connection, const std::string& wait);

}  // namespace skewscope
