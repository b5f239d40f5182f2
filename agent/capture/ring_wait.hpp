// How a ring buffer reader waits, and how a long wait ends early (agent/runtime/ring_drain.hpp,
// "idle"): the kernel side's wake-up, which its programs force at the next record once the reader
// has armed its idle flag, or a stop (interrupt(), from another thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "skewscope/result.hpp"
#include "skewscope/stop_event.hpp"

namespace skewscope {

// A flag in the programs' `.data.wake` section (bpf/lib/tcp_halves.bpf.h): armed by the reader
// before a long wait, cleared by the first program that then submits a record, with a forced
// wake-up. Null (a source without one) never arms.
class ReaderIdleFlag {
 public:
  explicit ReaderIdleFlag(std::uint32_t* flag = nullptr) : flag_(flag) {}
  // Sets the flag as a full barrier: the reader's next look at the ring comes after it, so a
  // record is either seen by that look or submitted by a program that finds the flag set (unless
  // the program read the flag a few instructions before this store: that record waits for the
  // end of the wait, the bound docs/architecture.md gives). False without a flag.
  bool arm();

 private:
  std::uint32_t* flag_;
};

// A StopEvent in a ring buffer reader's epoll set (libbpf's ring_buffer__epoll_fd), so that
// interrupt() ends a wait at once. The reader then must not call ring_buffer__poll, which takes
// every ready entry for a ring of its own: it waits here and consumes.
class RingWait {
 public:
  // Adds a StopEvent to `epoll_fd` (not owned).
  static Result<RingWait> attach(int epoll_fd);
  // Until a ring has a wake-up, interrupt() was called (then every later wait returns at once), or
  // `timeout`. Returns 0, or the errno of a failed epoll_wait (EINTR is not a failure): the
  // reader's poll then fails with it, as libbpf's ring_buffer__poll would have.
  int wait(std::chrono::milliseconds timeout) const;
  void interrupt() const { stop_.notify(); }  // from any thread

 private:
  RingWait(int epoll_fd, StopEvent stop) : epoll_fd_(epoll_fd), stop_(std::move(stop)) {}
  int epoll_fd_;
  StopEvent stop_;
};

}  // namespace skewscope
