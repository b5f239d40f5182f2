// --wire-timestamps: the wire-level capture (tc on the named interfaces), its own pairing and its
// own health levels, run beside the syscall pipeline on a thread of their own. It shares the
// agent core's domains, simulated clocks and monotonic -> realtime mapping (read under the core's
// lock), so a wire half lands in the same domain and the same clock as a syscall half would.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capture/wire_capture.hpp"
#include "capture/wire_decode.hpp"
#include "clocks/phc_mapping.hpp"
#include "core/agent_core.hpp"
#include "correlate/wire_correlator.hpp"
#include "health/level_health.hpp"

namespace skewscope {

struct WireRuntimeConfig {
  WireOptions capture;  // interfaces (--wire-timestamps) and cgroups (--wire-cgroup)
  std::int64_t window_ns = 30'000'000'000;
  CorrelatorLimits limits;
  estimate::Config estimate;
  std::uint16_t own_port = 0;  // the agent's HTTP port: its own traffic is not traced
  std::uint32_t own_netns = 0;
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
  // Loads (by the candidate tables, features.hpp) and attaches; an error when any named
  // interface cannot be used.
  static Result<WireStart> start(WireRuntimeConfig config, AgentCore& core, std::mutex& core_lock,
                                 const KernelFeatures& features);
  ~WireRuntime();
  void stop();  // joins the thread, then detaches everything (idempotent)

  // Adds the wire levels to a report taken under the core's lock, and applies the best level to
  // each pair's health. The caller holds the core's lock.
  void fill(AgentReport& report, std::int64_t now_ns) const;
  const WireCapture& capture() const { return *capture_; }

 private:
  WireRuntime(WireRuntimeConfig config, AgentCore& core, std::mutex& core_lock);
  void run();
  void ingest(const std::vector<skewscope_wire_event>& batch);  // under the core's lock
  void read_phcs();                                             // outside the lock

  WireRuntimeConfig config_;
  AgentCore& core_;
  std::mutex& core_lock_;
  std::unique_ptr<WireCapture> capture_;
  WireCorrelator correlator_;
  LevelHealth levels_;
  WireReport counts_;                               // counters only; pairs are filled per report
  std::map<int, clocks::PhcMapping> phc_by_index_;  // written under the core's lock
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> phc_of_interface_;  // (netns, ifindex) -> PHC
  std::uint64_t losses_seen_ = 0;
  std::atomic<bool> stopping_{false};
  bool failed_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace skewscope
