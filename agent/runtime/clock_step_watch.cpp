#include "runtime/clock_step_watch.hpp"

#include <poll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace skewscope {

Result<std::unique_ptr<ClockStepWatch>> ClockStepWatch::start(std::function<void()> on_step) {
  const int timer = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
  if (timer < 0) return Result<std::unique_ptr<ClockStepWatch>>::fail(std::string("timerfd: ") + std::strerror(errno));
  auto stop = StopEvent::create();
  if (!stop) {
    close(timer);
    return Result<std::unique_ptr<ClockStepWatch>>::fail(stop.error);
  }
  std::unique_ptr<ClockStepWatch> watch(new ClockStepWatch(timer, std::move(*stop), std::move(on_step)));
  if (!watch->arm()) {
    const int saved = errno;
    return Result<std::unique_ptr<ClockStepWatch>>::fail(std::string("timerfd_settime: ") + std::strerror(saved));
  }
  watch->thread_ = std::thread([w = watch.get()] { w->run(); });
  return Result<std::unique_ptr<ClockStepWatch>>::ok(std::move(watch));
}

ClockStepWatch::ClockStepWatch(int timer_fd, StopEvent stop, std::function<void()> on_step)
    : timer_fd_(timer_fd), stop_(std::move(stop)), on_step_(std::move(on_step)) {}

ClockStepWatch::~ClockStepWatch() {
  if (thread_.joinable()) {
    stop_.notify();
    thread_.join();
  }
  close(timer_fd_);
}

// Armed for a moment that never comes (a year ahead, absolute): only a step ends the wait.
bool ClockStepWatch::arm() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  itimerspec when{};
  when.it_value.tv_sec = now.tv_sec + 365L * 24 * 3600;
  return timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &when, nullptr) == 0;
}

void ClockStepWatch::run() {
  for (;;) {
    pollfd fds[2] = {{timer_fd_, POLLIN, 0}, {stop_.fd(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;  // cannot wait any more: the mappings keep their scheduled readings
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    std::uint64_t expirations = 0;
    const ssize_t got = read(timer_fd_, &expirations, sizeof expirations);
    if (got < 0 && errno == ECANCELED) on_step_();
    // Cancelled (a step) or, a year on, expired: armed again from the clock as it now reads.
    if (!arm()) return;
  }
}

}  // namespace skewscope
