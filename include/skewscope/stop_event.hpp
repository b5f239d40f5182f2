// An eventfd that a stop writes, so that a thread waiting in poll or epoll on it, beside what it
// serves, ends its wait at once instead of waking at intervals to look at a flag (each wake-up of
// an idle agent's thread costs a VM tens of µs). Never read back: once notified it stays readable,
// so every later wait returns at once too, until the thread has ended.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "skewscope/result.hpp"

namespace skewscope {

class StopEvent {
 public:
  static Result<StopEvent> create() {
    const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return Result<StopEvent>::fail(std::string("creating an eventfd: ") + std::strerror(errno));
    return Result<StopEvent>::ok(StopEvent(fd));
  }
  StopEvent(StopEvent&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  StopEvent& operator=(StopEvent&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  StopEvent(const StopEvent&) = delete;
  StopEvent& operator=(const StopEvent&) = delete;
  ~StopEvent() {
    if (fd_ >= 0) close(fd_);  // also leaves any epoll set it was in
  }

  int fd() const { return fd_; }
  // From any thread.
  void notify() const {
    const std::uint64_t one = 1;
    if (write(fd_, &one, sizeof one) < 0) {
      // Only an overflowed counter fails, and the eventfd is readable then already.
    }
  }

 private:
  explicit StopEvent(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace skewscope
