#include "cli/capture_loop.hpp"

#include <vector>

#include "capture/clock_mapping.hpp"

namespace skewscope {

CaptureLoopEnd run_capture_loop(EventSource& source, AgentCore& core, std::mutex& core_lock,
                                const std::atomic<bool>& stopping, std::size_t max_batch) {
  std::vector<skewscope_half_event> batch;
  std::int64_t last_tick = 0;
  bool behind = false;
  while (!stopping) {
    batch.clear();
    // 20 ms between passes: halves pair within tens of ms, and the kernel side does not wake us
    // per record. A full batch means a backlog: go again at once.
    if (!source.poll(batch, std::chrono::milliseconds(behind ? 0 : 20))) {
      std::string error = source.error();
      SourceCounters last = source.counters();
      std::lock_guard guard(core_lock);
      core.ingest(batch);  // whatever the failing pass still delivered
      core.observe_source(monotonic_now_ns(), last);
      core.mark_capture_down(error);
      return {true, error};
    }
    behind = batch.size() >= max_batch;
    const std::int64_t now = monotonic_now_ns();
    const bool tick = now - last_tick >= 100'000'000;
    // Reading the counters costs a few syscalls: outside the lock the HTTP thread waits on.
    SourceCounters counters;
    if (tick) counters = source.counters();
    std::lock_guard guard(core_lock);
    if (tick) {
      core.clock_mapping().sample_now();
      core.tick(now);
      core.observe_source(now, counters);
      last_tick = now;
    }
    core.ingest(batch);
  }
  return {};
}

}  // namespace skewscope
