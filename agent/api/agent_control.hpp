// The commands `skewscope agent` takes on its control socket (--control-socket). Its own file
// because it is the agent's only mutating interface: one line in, one line of answer out.
#pragma once

#include <string>

#include "core/shared_core.hpp"

namespace skewscope {

// `simulate NAME=OFFSET[,DRIFTppm]` sets a domain's simulated clock, under the core's lock. The answer
// starts with "ok " or "error: ".
std::string handle_control(const std::string& line, SharedCore& shared);

}  // namespace skewscope
