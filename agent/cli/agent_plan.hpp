// The `skewscope agent` options, parsed and validated into the run's plan (runtime/agent_plan.hpp).
// Its own file because it is the part that never touches the kernel: every usage error (exit 2)
// the flags alone can show is found here, before anything is bound, loaded or attached.
#pragma once

#include "cli/agent_command.hpp"
#include "runtime/agent_plan.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// Fills `plan` from `options`; the error names the option at fault.
Status plan_agent(const AgentOptions& options, AgentPlan& plan);

}  // namespace skewscope
