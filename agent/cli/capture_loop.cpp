#include "cli/capture_loop.hpp"

#include <vector>

#include "capture/clock_mapping.hpp"

namespace skewscope {

CaptureLoopEnd run_capture_loop(EventSource& source, SharedCore& shared, const std::atomic<bool>& stopping,
                                std::size_t max_batch, translate::ConntrackWatch* conntrack) {
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
      auto core = shared.lock();
      core->ingest(batch);  // whatever the failing pass still delivered
      core->observe_source(monotonic_now_ns(), last);
      core->mark_capture_down(error);
      return {true, error};
    }
    behind = batch.size() >= max_batch;
    // Read after the poll, every pass: every record in `batch` was submitted before this read, so
    // a report never shows more records read than submitted. A few syscalls, outside the lock
    // the HTTP thread waits on.
    const SourceCounters counters = source.counters();
    const std::int64_t now = monotonic_now_ns();
    auto core = shared.lock();
    if (conntrack) feed_conntrack(*conntrack, *core, now);
    if (now - last_tick >= 100'000'000) {
      core->clock_mapping().sample_now();
      core->tick(now);
      last_tick = now;
    }
    core->ingest(batch);
    core->observe_source(now, counters);
  }
  return {};
}

void feed_conntrack(translate::ConntrackWatch& conntrack, AgentCore& core, std::int64_t now_ns) {
  thread_local std::vector<translate::ConntrackEntry> entries;  // reused: no allocation per pass
  entries.clear();
  conntrack.drain(entries);
  core.observe_conntrack(entries, now_ns, conntrack.report());
}

}  // namespace skewscope
