// Tracepoint attachment reads ids from tracefs, which may not be mounted.
#pragma once

#include <string>

#include "skewscope/result.hpp"

namespace skewscope {

inline constexpr const char* kTracefsPath = "/sys/kernel/tracing";

// Makes /sys/kernel/tracing usable by this process. When it is not mounted, the agent enters a
// private mount namespace (slave to the host's, so later mounts such as /run/netns still show)
// and mounts tracefs there: nothing is left mounted on the host, and agents that run at the same
// time never unmount each other's tracefs. Must run before the process starts threads.
Status ensure_tracefs();

bool tracefs_mounted();

}  // namespace skewscope
