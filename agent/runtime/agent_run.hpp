// The run of `skewscope agent` once its flags are planned (cli/agent_plan.*): everything it needs
// is in the plan, so the runtime knows no flag parser.
#pragma once

#include "runtime/agent_plan.hpp"

namespace skewscope {

// Binds, loads, attaches, runs until a stop signal or a dead capture, then tears down in order.
// The exit code: 0, 1 runtime error, 2 usage error (a file or setting only the run can check:
// --policy-file, --web.config.file, --tenant-user, --peer-agent, --exchange, --otlp-endpoint).
int run_agent(AgentPlan plan);

}  // namespace skewscope
