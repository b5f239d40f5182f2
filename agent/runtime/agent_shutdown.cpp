// The stop signals, the wait for them and the teardown deadline of `skewscope agent`
// (agent_shutdown.hpp says why they are a file of their own).
#include "runtime/agent_shutdown.hpp"

#include <pthread.h>

#include <cstdlib>
#include <iostream>
#include <optional>

#include "capture/clock_mapping.hpp"
#include "domains/duration.hpp"

namespace skewscope {

sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

int wait_for_stop(const sigset_t& signals, const std::atomic<bool>& capture_failed, std::int64_t grace_ns) {
  std::optional<std::int64_t> failed_at;
  for (;;) {
    // A signal ends the wait at once; the step only bounds how late a capture failure is seen:
    // a second while there is none (a wake-up of an idle agent costs a VM tens of µs), then 100 ms.
    timespec step = failed_at ? timespec{0, 100'000'000} : timespec{1, 0};
    int signal = sigtimedwait(&signals, nullptr, &step);
    if (signal > 0) return signal;
    if (!capture_failed) continue;
    const std::int64_t now = monotonic_now_ns();
    if (!failed_at) failed_at = now;
    if (now - *failed_at >= grace_ns) return 0;
  }
}

void wait_for_teardown(const sigset_t& signals, const std::atomic<bool>& torn_down) {
  const std::int64_t deadline = monotonic_now_ns() + kShutdownDeadlineNs;
  while (!torn_down) {
    timespec step{0, 50'000'000};
    if (sigtimedwait(&signals, nullptr, &step) > 0) {
      std::cerr << "skewscope agent: second signal, exiting now" << std::endl;
      std::_Exit(1);  // the kernel detaches whatever BPF link is still open with the process
    }
    if (monotonic_now_ns() >= deadline) {
      std::cerr << "skewscope agent: shutdown still waiting after " << format_duration_ns(kShutdownDeadlineNs)
                << ", exiting now" << std::endl;
      std::_Exit(1);
    }
  }
}

}  // namespace skewscope
