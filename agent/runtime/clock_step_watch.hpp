// The clock-step watch (docs/architecture.md, "Threads of the agent"): wakes the moment
// CLOCK_REALTIME is set and has every monotonic -> realtime mapping read the clocks at once.
// A timerfd on CLOCK_REALTIME armed with TFD_TIMER_CANCEL_ON_SET is cancelled by every
// discontinuous change of the clock (clock_settime, settimeofday, adjtimex ADJ_SETOFFSET, a leap
// second, a resume), so a step is placed to within this thread's wake-up instead of the mappings'
// next scheduled reading (100 ms for the core's, a few ms for the exchange's): halves captured in
// between would otherwise be placed with an offset from before the step, or one interpolated
// towards the step, off by up to its size. It costs nothing while the clock is not stepped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "skewscope/result.hpp"
#include "skewscope/stop_event.hpp"

namespace skewscope {

class ClockStepWatch {
 public:
  // Starts the thread; `on_step` runs on it after every step seen, and must be thread-safe with
  // respect to what it touches. Fails (with why) when the kernel has no such timerfd.
  static Result<std::unique_ptr<ClockStepWatch>> start(std::function<void()> on_step);
  ~ClockStepWatch();  // stops the thread and waits for it
  ClockStepWatch(const ClockStepWatch&) = delete;
  ClockStepWatch& operator=(const ClockStepWatch&) = delete;

 private:
  ClockStepWatch(int timer_fd, StopEvent stop, std::function<void()> on_step);
  void run();
  bool arm();

  int timer_fd_;
  StopEvent stop_;  // notified once to end the thread
  std::function<void()> on_step_;
  std::thread thread_;  // last: started once every member above is ready
};

}  // namespace skewscope
