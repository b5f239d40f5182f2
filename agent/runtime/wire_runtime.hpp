// --wire-timestamps: the wire-level capture's I/O (tc on the named interfaces, its ring buffer
// and the NICs' PHCs), on a thread of its own. What it reads goes into the agent core's wire
// pipeline (core/wire_pipeline.hpp) under the core's lock, where the wire halves land in the same
// domains and clocks as syscall halves and the report takes each pair's best level.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "capture/wire_capture.hpp"
#include "core/shared_core.hpp"

namespace skewscope {

struct WireRuntimeConfig {
  WireOptions capture;  // interfaces (--wire-timestamps) and cgroups (--wire-cgroup)
  WirePipelineConfig pipeline;
};

class WireRuntime;
// A started wire runtime, or none when no tc variant loads on this kernel (the family is then off,
// and `wire` says why); which candidate serves each side.
struct WireStart {
  std::unique_ptr<WireRuntime> runtime;
  FamilyStatus wire;
  FamilyStatus send;
};

class WireRuntime {
 public:
  // Loads (by the candidate tables, features.hpp) and attaches, then enables the core's wire
  // pipeline; an error when any named interface cannot be used.
  static Result<WireStart> start(WireRuntimeConfig config, SharedCore& core, const KernelFeatures& features);
  ~WireRuntime();
  void stop();  // joins the thread, then detaches everything (idempotent)

  const WireCapture& capture() const { return *capture_; }

 private:
  explicit WireRuntime(SharedCore& core) : core_(core) {}
  void run();
  void read_phcs();  // outside the lock; each reading goes to the core under it

  SharedCore& core_;
  std::unique_ptr<WireCapture> capture_;
  std::vector<int> phcs_;  // the PHC indexes of the attached interfaces, each once
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace skewscope
