// The one loop of every thread that drains a ring buffer into the agent core (TCP halves,
// payloads, RDMA, wire): poll with a timeout, hand the batch on, go again at once while behind,
// end when asked to stop or when the source fails. Each thread says only what a pass does with
// its batch; the pacing and the end are the same for all four.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope {

// A source of records read in batches. A failure ends it: what the failing poll still read is in
// `out`, and the Status says why (for the log and the status).
template <typename Record>
class RingSource {
 public:
  virtual ~RingSource() = default;
  // Appends the records available, waiting at most `timeout` for the first.
  virtual Status poll(std::vector<Record>& out, std::chrono::milliseconds timeout) = 0;
};

// A source's failure: one whose message the capture left empty still ends the loop.
Status source_failed(std::string why);

// A capture whose poll says false on failure and names it in error() (the EventSource,
// RdmaCapture and WireCapture of capture/), as a RingSource.
template <typename Capture, typename Record>
class PolledRing final : public RingSource<Record> {
 public:
  explicit PolledRing(Capture& capture) : capture_(capture) {}
  Status poll(std::vector<Record>& out, std::chrono::milliseconds timeout) override {
    if (capture_.poll(out, timeout)) return Status::ok();
    return source_failed(capture_.error());
  }

 private:
  Capture& capture_;
};

// How long the next poll may wait: 20 ms between passes (records pair within tens of ms, and the
// kernel side does not wake us per record), no wait after a pass that read `max_batch` records or
// more (a backlog).
class DrainPace {
 public:
  explicit DrainPace(std::size_t max_batch) : max_batch_(max_batch) {}
  std::chrono::milliseconds next_timeout() const;
  void after_pass(std::size_t records) { behind_ = records >= max_batch_; }

 private:
  std::size_t max_batch_;
  bool behind_ = false;
};

// Drains `source` until `stopping` is set or the source fails. `take(batch, polled)` gets every
// pass's records with the poll's Status, the failing pass's too (whatever it still read). Returns
// the failure, or ok once stopped.
template <typename Record, typename Take>
Status drain_ring(RingSource<Record>& source, std::size_t max_batch, const std::atomic<bool>& stopping, Take&& take) {
  std::vector<Record> batch;
  DrainPace pace(max_batch);
  while (!stopping) {
    batch.clear();
    Status polled = source.poll(batch, pace.next_timeout());
    pace.after_pass(batch.size());
    take(batch, polled);
    if (!polled) return polled;
  }
  return Status::ok();
}

}  // namespace skewscope
