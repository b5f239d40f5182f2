// The commands `skewscope agent` takes on its control socket (--control-socket). Its own file
// because it is the agent's only mutating interface: one line in, one line of answer out.
#pragma once

#include <mutex>
#include <string>

#include "core/agent_core.hpp"

namespace skewscope {

// `simulate NAME=OFFSET[,DRIFTppm]` sets a domain's simulated clock, under `lock`. The answer
// starts with "ok " or "error: ".
std::string handle_control(const std::string& line, AgentCore& core, std::mutex& lock);

}  // namespace skewscope
