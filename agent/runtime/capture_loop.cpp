#include "runtime/capture_loop.hpp"

#include <algorithm>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "runtime/ring_drain.hpp"

namespace skewscope {

namespace {
constexpr std::chrono::milliseconds kCoreTick(100);  // the core's tick while halves come
}  // namespace

std::chrono::milliseconds capture_idle_wait(bool exchange, bool conntrack, std::int64_t estimate_interval_ns) {
  constexpr std::chrono::milliseconds kLongest(1000);
  if (exchange || conntrack) return kCoreTick;
  const auto interval =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(estimate_interval_ns));
  return std::clamp(interval, kCoreTick, kLongest);
}

Status run_capture_loop(EventSource& source, SharedCore& shared, const std::atomic<bool>& stopping,
                        std::size_t max_batch, translate::ConntrackWatch* conntrack,
                        std::chrono::milliseconds idle_wait) {
  PolledRing<EventSource, skewscope_half_event> ring(source);
  std::int64_t last_tick = 0;
  auto take = [&](const std::vector<skewscope_half_event>& batch, const Status& polled) {
    // Read after the poll, every pass: every record in `batch` was submitted before this read, so
    // a report never shows more records read than submitted. A few syscalls, outside the lock
    // the HTTP thread waits on.
    const SourceCounters counters = source.counters();
    if (!polled) {
      auto core = shared.lock();
      core->ingest(batch);  // whatever the failing pass still delivered
      core->observe_source(monotonic_now_ns(), counters);
      core->mark_capture_down(polled.error);
      return;
    }
    const std::int64_t now = monotonic_now_ns();
    auto core = shared.lock();
    if (conntrack) feed_conntrack(*conntrack, *core, now);
    if (now - last_tick >= std::chrono::nanoseconds(kCoreTick).count()) {
      core->clock_mapping().sample_now();
      core->tick(now);
      last_tick = now;
    }
    core->ingest(batch);
    core->observe_source(now, counters);
  };
  // Idle, a pass every `idle_wait`: each one ticks the core.
  return drain_ring(ring, max_batch, idle_wait, stopping, take);
}

void feed_conntrack(translate::ConntrackWatch& conntrack, AgentCore& core, std::int64_t now_ns) {
  thread_local std::vector<translate::ConntrackEntry> entries;  // reused: no allocation per pass
  entries.clear();
  conntrack.drain(entries);
  core.observe_conntrack(entries, now_ns, conntrack.report());
}

}  // namespace skewscope
