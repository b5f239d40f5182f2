#include "cli/payload_loop.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "capture/payload_reader.hpp"
#include "cli/capture_loop.hpp"

namespace skewscope {

std::string run_payload_loop(PayloadSource& source, SharedCore& shared, const std::atomic<bool>& stopping,
                             translate::ConntrackWatch* conntrack) {
  std::vector<PayloadRecord> batch;
  bool behind = false;
  while (!stopping) {
    // Records are submitted without waking a reader until the ring fills up: a pass at that
    // wake-up or every 20 ms, at once while behind.
    if (!behind) source.wait(std::chrono::milliseconds(20));
    batch.clear();
    const bool ok = source.poll(batch);
    behind = batch.size() >= PayloadRingReader::kMaxBatch;
    const PayloadCounters counters = source.counters();
    auto core = shared.lock();
    if (conntrack) feed_conntrack(*conntrack, *core, monotonic_now_ns());
    core->ingest_payloads(batch);
    core->observe_payload_source(counters);
    if (!ok) return source.error();
  }
  return {};
}

}  // namespace skewscope
