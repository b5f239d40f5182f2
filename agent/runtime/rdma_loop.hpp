// The RDMA capture thread's body (--rdma): records from the rdma_verbs capture into the agent
// core until asked to stop or until the ring buffer fails.
#pragma once

#include <atomic>

#include "capture/rdma_capture.hpp"
#include "core/shared_core.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// Returns the capture's failure (the core's capture is then marked down), ok once `stopping` was
// set.
Status run_rdma_loop(RdmaCapture& capture, SharedCore& core, const std::atomic<bool>& stopping);

}  // namespace skewscope
