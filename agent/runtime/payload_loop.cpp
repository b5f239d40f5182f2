#include "runtime/payload_loop.hpp"

#include <chrono>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "capture/payload_reader.hpp"
#include "runtime/capture_loop.hpp"
#include "runtime/ring_drain.hpp"

namespace skewscope {

namespace {
// Records are submitted without waking a reader until the ring fills up: a pass at that wake-up
// or when the timeout ends, at once (no wait) while behind.
class PayloadRing final : public RingSource<PayloadRecord> {
 public:
  explicit PayloadRing(PayloadSource& source) : source_(source) {}
  Status poll(std::vector<PayloadRecord>& out, std::chrono::milliseconds timeout) override {
    if (timeout.count() > 0) source_.wait(timeout);
    if (source_.poll(out)) return Status::ok();
    return source_failed(source_.error());
  }
  bool arm_idle_wakeup() override { return source_.arm_idle_wakeup(); }

 private:
  PayloadSource& source_;
};
}  // namespace

Status run_payload_loop(PayloadSource& source, SharedCore& shared, const std::atomic<bool>& stopping,
                        translate::ConntrackWatch* conntrack) {
  PayloadRing ring(source);
  // A failing pass's records are taken too, then the loop ends with its Status.
  auto take = [&](std::vector<PayloadRecord>& batch, const Status&) {
    const PayloadCounters counters = source.counters();
    {
      auto core = shared.lock();
      if (conntrack) feed_conntrack(*conntrack, *core, monotonic_now_ns());
      core->ingest_payloads(batch);
      core->observe_payload_source(counters);
    }
    source.recycle(batch);  // read: its buffers serve the next passes
  };
  // Idle, a pass a second (what is timed, the pairing's expiry, runs on the core's tick).
  return drain_ring(ring, PayloadRingReader::kMaxBatch, std::chrono::seconds(1), stopping, take);
}

}  // namespace skewscope
