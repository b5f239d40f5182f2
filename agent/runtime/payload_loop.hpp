// The payload thread's body (--payload-bytes): payload records from a PayloadSource into the agent
// core until asked to stop or until the source fails. Its own thread, so the halves' capture
// loop keeps its pace whatever the parsers cost.
#pragma once

#include <atomic>

#include "capture/payload_source.hpp"
#include "core/shared_core.hpp"
#include "skewscope/result.hpp"
#include "translate/conntrack_watch.hpp"

namespace skewscope {

// Returns the source's failure, ok once `stopping` was set. `conntrack` (--nat-conntrack, else
// null) is fed before each batch, as the capture loop does.
Status run_payload_loop(PayloadSource& source, SharedCore& core, const std::atomic<bool>& stopping,
                        translate::ConntrackWatch* conntrack = nullptr);

}  // namespace skewscope
