// Commands that talk to a running agent: status, top (HTTP) and simulate (control socket),
// and doctor (this kernel, no agent needed).
#pragma once

#include <string>


namespace skewscope {

inline constexpr const char* kDefaultAgentUrl = "http://127.0.0.1:9477";

// Exit codes of `skewscope status` (contract): 0 healthy, 1 a pair violated, 2 usage, 3 unreachable.
int run_status(const std::string& agent_url, bool json);
int run_top(const std::string& agent_url, const std::string& interval, int count, bool once, bool json);
int run_simulate(const std::string& spec, const std::string& control_socket);
int run_doctor();

}  // namespace skewscope
