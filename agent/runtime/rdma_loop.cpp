#include "runtime/rdma_loop.hpp"

#include <vector>

#include "runtime/ring_drain.hpp"

namespace skewscope {

Status run_rdma_loop(RdmaCapture& capture, SharedCore& shared, const std::atomic<bool>& stopping) {
  PolledRing<RdmaCapture, skewscope_rdma_event> ring(capture);
  auto take = [&](const std::vector<skewscope_rdma_event>& batch, const Status& polled) {
    const RdmaSourceCounters counters = capture.counters();
    auto core = shared.lock();
    core->ingest_rdma(batch);
    core->observe_rdma_source(counters);
    if (!polled) core->mark_capture_down(polled.error);
  };
  // 20 ms between passes, as for TCP; a full batch means a backlog: go again at once.
  return drain_ring(ring, RdmaCapture::kMaxBatch, kBusyWait, stopping, take);  // no idle wake-up: busy pace
}

}  // namespace skewscope
