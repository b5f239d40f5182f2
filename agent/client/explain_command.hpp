// `skewscope explain [--agent URL]... [--json]`: why causality broke and whose clock it is.
#pragma once

#include <string>
#include <vector>

#include "client/agent_client.hpp"

namespace skewscope {

// Exit 0: no incident; 1: an incident; 2: usage; 3: an agent unreachable or its answer unusable
// (what the others said is still printed).
int run_explain(const std::vector<std::string>& agent_urls, const AgentConnectionOptions& connection, bool json);

}  // namespace skewscope
