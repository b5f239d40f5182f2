// Commands that talk to a running agent: status, top (HTTP) and simulate (control socket);
// clocks and whatif. (doctor: client/doctor_command.hpp.)
#pragma once

#include <string>
#include <vector>

#include "client/agent_client.hpp"

namespace skewscope {

inline constexpr const char* kDefaultAgentUrl = "http://127.0.0.1:9477";

// Exit codes of `skewscope status` (contract): 0 healthy, 1 a pair violated, 2 usage, 3 unreachable
// (no answer, a TLS failure or refused credentials: no verdict either way).
// `connection` (TLS trust, client certificate, credentials) applies to every agent URL.
int run_status(const std::string& agent_url, const AgentConnectionOptions& connection, bool json);
int run_top(const std::string& agent_url, const AgentConnectionOptions& connection, const std::string& interval,
            int count, bool once, bool json);
// Several agents: one merged view (client/status_merge.hpp); one agent: exactly the commands above.
// status exits 1 if a merged pair is violated, else 3 if an agent is unreachable, else 0 healthy
// (1 when an agent reports unknown health). top keeps refreshing while agents come and go, shows
// which are unreachable, and exits 3 if one was at its last refresh.
int run_status(const std::vector<std::string>& agent_urls, const AgentConnectionOptions& connection, bool json);
int run_top(const std::vector<std::string>& agent_urls, const AgentConnectionOptions& connection,
            const std::string& interval, int count, bool once, bool json);
int run_simulate(const std::string& spec, const std::string& control_socket);
// Reads this host's clock sources directly (no agent needed), like the agent's clock stage.
int run_clocks(const std::vector<std::string>& ptp4l_sockets, bool json);
// Asks the agent for the inversion rates its live spans would have under a clock error model.
int run_whatif(const std::string& agent_url, const AgentConnectionOptions& connection, const std::string& clock_error,
               bool json);

}  // namespace skewscope
