// `skewscope policy check FILE`: validates a policy file as the agent would load it, without an
// agent. Exit 0 with one line per policy, or 2 with the file, the line and what is wrong.
#pragma once

#include <string>

namespace skewscope {

int run_policy_check(const std::string& path);

}  // namespace skewscope
