#include "runtime/ring_drain.hpp"

namespace skewscope {

std::chrono::milliseconds DrainPace::next_timeout() const {
  switch (state_) {
    case State::checking: return std::chrono::milliseconds(0);
    case State::idle: return idle_wait_;
    case State::busy: break;
  }
  return behind_ ? std::chrono::milliseconds(0) : kBusyWait;
}

bool DrainPace::after_pass(std::size_t records) {
  behind_ = records >= max_batch_;
  if (records > 0) {
    state_ = State::busy;
    empty_passes_ = 0;
    return false;
  }
  if (state_ == State::checking) state_ = State::idle;
  if (state_ != State::busy || cannot_wake_) return false;
  return ++empty_passes_ >= kIdlePasses;
}

void DrainPace::armed(bool ok) {
  if (ok) {
    state_ = State::checking;
  } else {
    cannot_wake_ = true;
  }
  empty_passes_ = 0;
}

Status source_failed(std::string why) { return Status::fail(why.empty() ? "the source failed" : std::move(why)); }

}  // namespace skewscope
