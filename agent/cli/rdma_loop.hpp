// The RDMA capture thread's body (--rdma): records from the rdma_verbs capture into the agent
// core until asked to stop or until the ring buffer fails.
#pragma once

#include <atomic>
#include <string>

#include "capture/rdma_capture.hpp"
#include "core/shared_core.hpp"

namespace skewscope {

// Returns the error when the capture failed, empty when `stopping` was set.
std::string run_rdma_loop(RdmaCapture& capture, SharedCore& core, const std::atomic<bool>& stopping);

}  // namespace skewscope
