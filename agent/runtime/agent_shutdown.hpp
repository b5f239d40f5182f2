// How `skewscope agent` stops: which signals end it, waiting for one (or for a dead capture's
// grace to run out), and the deadline on the teardown that follows. Its own file because these
// rules bound how long the process outlives a signal, whatever the rest of the run does.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>

namespace skewscope {

// However long HTTP clients or a ptp4l reply keep the servers and threads busy, the process is
// gone within 3 s of the signal: 2.5 s for an orderly teardown, the rest for the exit itself.
constexpr std::int64_t kShutdownDeadlineNs = 2'500'000'000;

// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts after) and
// returns them, to be taken by sigtimedwait.
sigset_t block_stop_signals();

// Blocks until SIGINT/SIGTERM (returns it) or until `capture_failed` has been set for `grace_ns`
// (returns 0).
int wait_for_stop(const sigset_t& signals, const std::atomic<bool>& capture_failed, std::int64_t grace_ns);

// Waits for `torn_down` while another thread tears the agent down; exits the process at once
// (status 1) on a second stop signal or when kShutdownDeadlineNs has passed.
void wait_for_teardown(const sigset_t& signals, const std::atomic<bool>& torn_down);

}  // namespace skewscope
