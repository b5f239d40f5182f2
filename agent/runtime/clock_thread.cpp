#include "runtime/clock_thread.hpp"

#include <chrono>
#include <cstdint>

#include "clocks/error_bound.hpp"

namespace skewscope {

ClockThread::ClockThread(clocks::ClockMonitor& monitor, SharedCore& core, exchange::KafkaExchange* kafka)
    : monitor_(monitor), core_(core), kafka_(kafka), thread_([this] { run(); }) {}

void ClockThread::join() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void ClockThread::request_stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
}

void ClockThread::run() {
  for (;;) {
    monitor_.poll();
    auto bound = monitor_.snapshot().error_bound_seconds;
    if (kafka_)
      kafka_->set_clock_quality(bound ? static_cast<std::int64_t>(*bound * 1e9) : 0,
                                static_cast<std::uint32_t>(monitor_.snapshot().status));
    core_.lock()->set_clock_bound(clocks::bound_seconds_to_ns(bound));
    // Once a second.
    std::unique_lock lock(mutex_);
    if (stop_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) return;
  }
}

}  // namespace skewscope
