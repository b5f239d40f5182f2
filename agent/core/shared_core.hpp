// The agent core with the one mutex that serialises the threads feeding and reading it (capture,
// payload, RDMA, wire, clocks, the exchange's Kafka threads, HTTP, control, OTLP). AgentCore has
// no threads and no lock of its own; this is the only way the agent's threads reach it, so no
// call can forget the lock and no function takes a core and a mutex that could belong to
// different cores.
#pragma once

#include <mutex>
#include <utility>

#include "core/agent_core.hpp"

namespace skewscope {

class SharedCore {
 public:
  explicit SharedCore(AgentCore core) : core_(std::move(core)) {}
  SharedCore(const SharedCore&) = delete;
  SharedCore& operator=(const SharedCore&) = delete;

  // The core while a lock is held: released when this goes out of scope.
  class Locked {
   public:
    AgentCore& operator*() const { return core_; }
    AgentCore* operator->() const { return &core_; }

   private:
    friend class SharedCore;
    Locked(std::mutex& mutex, AgentCore& core) : guard_(mutex), core_(core) {}
    std::unique_lock<std::mutex> guard_;
    AgentCore& core_;
  };

  // For a block that does several things under one lock: `auto core = shared.lock(); core->...`.
  Locked lock() { return Locked(mutex_, core_); }
  // fn(core) under the lock; returns what fn returns.
  template <typename Fn>
  decltype(auto) with(Fn&& fn) {
    std::lock_guard guard(mutex_);
    return std::forward<Fn>(fn)(core_);
  }

 private:
  std::mutex mutex_;
  AgentCore core_;
};

}  // namespace skewscope
