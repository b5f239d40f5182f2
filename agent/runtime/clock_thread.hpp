// The clocks thread (docs/architecture.md, "Threads of the agent"): polls this host's clock
// sources once a second and hands the error bound to the core and, with --exchange, to the
// exchange's records. On its own thread because a ptp4l that does not answer costs its poll the
// reply timeout: only this thread waits for it, never the capture.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "clocks/clock_monitor.hpp"
#include "core/shared_core.hpp"
#include "runtime/kafka_exchange.hpp"

namespace skewscope {

class ClockThread {
 public:
  // Starts polling at once. `monitor`, `core` and `kafka` (null without --exchange) must outlive
  // the thread, i.e. this object or its join().
  ClockThread(clocks::ClockMonitor& monitor, SharedCore& core, exchange::KafkaExchange* kafka);
  ~ClockThread() { join(); }
  ClockThread(const ClockThread&) = delete;
  ClockThread& operator=(const ClockThread&) = delete;

  // Asks the thread to end; it does so at once, or once a poll in progress returns.
  void request_stop();
  // request_stop(), then waits for the thread; a second call does nothing.
  void join();

 private:
  void run();

  clocks::ClockMonitor& monitor_;
  SharedCore& core_;
  exchange::KafkaExchange* kafka_;
  // The wait between polls ends at a stop: one wake-up a second, not ten (each costs a VM tens of
  // µs, and an idle agent is mostly its wake-ups).
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;  // under mutex_
  std::thread thread_;     // last: started once every member above is ready
};

}  // namespace skewscope
