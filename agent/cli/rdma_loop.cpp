#include "cli/rdma_loop.hpp"

#include <vector>

namespace skewscope {

std::string run_rdma_loop(RdmaCapture& capture, SharedCore& shared, const std::atomic<bool>& stopping) {
  std::vector<skewscope_rdma_event> batch;
  bool behind = false;
  while (!stopping) {
    batch.clear();
    // 20 ms between passes, as for TCP; a full batch means a backlog: go again at once.
    const bool ok = capture.poll(batch, std::chrono::milliseconds(behind ? 0 : 20));
    behind = batch.size() >= RdmaCapture::kMaxBatch;
    const RdmaSourceCounters counters = capture.counters();
    auto core = shared.lock();
    core->ingest_rdma(batch);
    core->observe_rdma_source(counters);
    if (!ok) {
      core->mark_capture_down(capture.error());
      return capture.error();
    }
  }
  return {};
}

}  // namespace skewscope
