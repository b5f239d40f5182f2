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

void ClockThread::run() {
  while (!stopping_) {
    monitor_.poll();
    auto bound = monitor_.snapshot().error_bound_seconds;
    if (kafka_)
      kafka_->set_clock_quality(bound ? static_cast<std::int64_t>(*bound * 1e9) : 0,
                                static_cast<std::uint32_t>(monitor_.snapshot().status));
    core_.lock()->set_clock_bound(clocks::bound_seconds_to_ns(bound));
    // Once a second, in steps short enough that a stop is seen within 100 ms.
    for (int i = 0; i < 10 && !stopping_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace skewscope
