// The one loop of every thread that drains a ring buffer into the agent core (TCP halves,
// payloads, RDMA, wire): poll with a timeout, hand the batch on, go again at once while behind,
// wait longer while idle, end when asked to stop or when the source fails. Each thread says only
// what a pass does with its batch and how long it may wait when idle; the pacing and the end are
// the same for all four.
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
  // Asks the kernel side to end the next wait at its next record (see DrainPace). False when it
  // cannot: the loop then keeps its busy pace.
  virtual bool arm_idle_wakeup() { return false; }
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
  bool arm_idle_wakeup() override {
    if constexpr (requires { capture_.arm_idle_wakeup(); })
      return capture_.arm_idle_wakeup();
    else
      return false;
  }

 private:
  Capture& capture_;
};

// The wait between passes while records come: they pair within tens of ms, and the kernel side
// does not wake the reader per record.
inline constexpr std::chrono::milliseconds kBusyWait{20};

// How long the next poll may wait.
// - busy: kBusyWait; none after a pass that read `max_batch` records or more (a backlog).
// - idle: after kIdlePasses empty passes in a row, the source is asked to have the kernel side
//   wake it at its next record (RingSource::arm_idle_wakeup); one pass without a wait then takes a
//   record submitted silently just before that, and the passes after it wait `idle_wait` each
//   (the wake-up ends such a wait at once) until one reads a record: busy again. A source that
//   cannot be woken stays busy. Why: each pass of an agent thread costs tens of µs on a VM (its
//   timer, its wake-up, two context switches), and an idle agent's ring loops were most of its CPU
//   at 50 passes a second each.
class DrainPace {
 public:
  static constexpr int kIdlePasses = 10;  // 200 ms of nothing at the busy pace
  DrainPace(std::size_t max_batch, std::chrono::milliseconds idle_wait)
      : max_batch_(max_batch), idle_wait_(idle_wait) {}
  std::chrono::milliseconds next_timeout() const;
  // After a pass that read `records`: true when the loop should now arm its source's wake-up.
  bool after_pass(std::size_t records);
  // The source's answer to that arming.
  void armed(bool ok);

 private:
  enum class State { busy, checking, idle };
  std::size_t max_batch_;
  std::chrono::milliseconds idle_wait_;
  State state_ = State::busy;
  bool behind_ = false;
  int empty_passes_ = 0;
  bool cannot_wake_ = false;  // the source said it cannot: never asked again
};

// Drains `source` until `stopping` is set or the source fails. `take(batch, polled)` gets every
// pass's records with the poll's Status, the failing pass's too (whatever it still read). Idle,
// a poll waits up to `idle_wait` (see DrainPace; whoever sets `stopping` should also end the
// source's wait). Returns the failure, or ok once stopped.
template <typename Record, typename Take>
Status drain_ring(RingSource<Record>& source, std::size_t max_batch, std::chrono::milliseconds idle_wait,
                  const std::atomic<bool>& stopping, Take&& take) {
  std::vector<Record> batch;
  DrainPace pace(max_batch, idle_wait);
  while (!stopping) {
    batch.clear();
    Status polled = source.poll(batch, pace.next_timeout());
    if (pace.after_pass(batch.size())) pace.armed(source.arm_idle_wakeup());
    take(batch, polled);
    if (!polled) return polled;
  }
  return Status::ok();
}

}  // namespace skewscope
