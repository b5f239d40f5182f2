// The capture thread's body: events from an EventSource into the agent core until asked to stop
// or until the source fails. Taking the interface (not the BPF capture) lets tests drive the very
// loop production runs with a source that fails.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "capture/event_source.hpp"
#include "core/shared_core.hpp"
#include "skewscope/result.hpp"
#include "translate/conntrack_watch.hpp"

namespace skewscope {

// Drains `source` (runtime/ring_drain.hpp), feeds `core` under its lock, records the source's
// counters after every poll and ticks the core every 100 ms, or at each pass of an idle loop
// (`idle_wait` apart, capture_idle_wait). When the source fails it records the counters once more
// and marks the core's capture down (every pair unknown) before returning the failure; ok once
// `stopping` was set. `max_batch`: a poll that returns this many events means a backlog, so the
// next poll does not wait. `conntrack` (--nat-conntrack, else null) is fed after each poll, before
// the batch (feed_conntrack).
Status run_capture_loop(EventSource& source, SharedCore& core, const std::atomic<bool>& stopping, std::size_t max_batch,
                        translate::ConntrackWatch* conntrack = nullptr,
                        std::chrono::milliseconds idle_wait = std::chrono::milliseconds(100));

// How long the capture loop waits between passes while no half comes: its passes tick the core.
// 100 ms with the exchange (remote halves pair on that tick, within 100 ms) or conntrack (its
// events queue in a socket until a pass reads them); else the estimator's interval (its
// evaluations ride on the tick), at least 100 ms and at most 1 s.
std::chrono::milliseconds capture_idle_wait(bool exchange, bool conntrack, std::int64_t estimate_interval_ns);

// Reads every conntrack entry queued now and feeds it to `core`. Call with the core's lock held,
// from every thread that is about to feed halves it has just read: each of those halves was
// captured after its connection's first packet, whose entry is therefore already queued, so no
// half is keyed before its translation is known. The lock also serialises the socket reads.
void feed_conntrack(translate::ConntrackWatch& conntrack, AgentCore& core, std::int64_t now_ns);

}  // namespace skewscope
