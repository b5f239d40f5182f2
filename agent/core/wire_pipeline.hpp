// The pure part of --wire-timestamps: wire records -> decode -> domain (by the interface's
// network namespace) -> time base (the kernel's receive stamp, the monotonic -> realtime
// mapping, or the NIC's PHC mapped to the system clock) -> the wire correlator -> each level's
// health window and estimator. No thread, no I/O: the wire runtime reads the ring buffer and the
// PHCs and hands both over as values; `AgentCore` owns one of these when the wire capture runs,
// feeds it the domains and clocks that syscall halves use, and reports its levels.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "capture/wire_counters.hpp"
#include "clocks/phc_mapping.hpp"
#include "correlate/correlator.hpp"
#include "correlate/wire_correlator.hpp"
#include "domains/domain_registry.hpp"
#include "domains/simulated_clocks.hpp"
#include "estimate/estimator.hpp"
#include "health/level_health.hpp"
#include "skewscope/abi/wire_event.h"

namespace skewscope {

struct WirePipelineConfig {
  std::int64_t window_ns = 30'000'000'000;
  CorrelatorLimits limits;
  estimate::Config estimate;
  bool ack_samples = false;  // --wire-ack-samples: shown in the report
};

// An interface the wire capture attached to, as the report shows it and as its hardware stamps
// are mapped: by the PHC of (its network namespace, its ifindex), when it has one.
struct WireInterfaceSetup {
  WireInterfaceReport shown;  // shown.phc_index: -1 without a PHC
  std::uint32_t netns_ino = 0;
  std::uint32_t ifindex = 0;
};

// What the wire runtime found when it attached (capture/wire_capture.hpp), as plain values.
struct WireSetup {
  std::string send_path;
  bool rx_timestamps_held = false;
  std::vector<WireInterfaceSetup> interfaces;
};

// The domains and clocks a wire half is placed in: the same ones as a syscall half's.
struct WireClocks {
  const DomainRegistry& domains;
  const SimulatedClocks& simulated;
  const MonotonicToRealtime& mapping;
};

class WirePipeline {
 public:
  WirePipeline(WirePipelineConfig config, const WireSetup& setup);

  // `own_port` (the agent's HTTP port, in `own_netns`): its own traffic is counted, not paired.
  void ingest(const std::vector<skewscope_wire_event>& batch, const WireClocks& clocks,
              std::optional<std::uint16_t> own_port, std::uint32_t own_netns);
  // The kernel side's counters as read after a pass: kept for reports, and the halves lost since
  // the last reading mark the wire levels' windows incomplete.
  void observe_source(std::int64_t now_ns, const WireCounters& counters);
  // Call after every pass: expires pending halves every 100 ms, re-evaluates the levels'
  // estimators once a second.
  void tick(std::int64_t now_ns);
  // A reading of PHC `phc_index` (read by the runtime, outside the core's lock); ignored for a
  // PHC no attached interface uses.
  void add_phc_reading(int phc_index, const clocks::PhcReadingPoint& reading);
  // The ring buffer can no longer be read: the levels turn unknown, the report says why.
  void mark_down(std::string error);

  // This pipeline's part of the report; `capture_up`: the syscall capture's, which the wire
  // levels share (a pair is unknown at every level once either capture is down).
  void fill(WireReport& out, std::int64_t now_ns, bool capture_up) const;

 private:
  std::optional<clocks::MappedStamp> map_hardware(std::uint32_t netns_ino, std::uint32_t ifindex,
                                                  std::int64_t hardware_ns) const;

  WirePipelineConfig config_;
  WireCorrelator correlator_;
  LevelHealth levels_;
  WireReport counts_;  // counters only; pairs are filled per report
  std::map<int, clocks::PhcMapping> phc_by_index_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> phc_of_interface_;  // (netns, ifindex) -> PHC
  std::uint64_t losses_seen_ = 0;
  std::int64_t last_expire_ns_ = 0;
  std::int64_t last_estimate_ns_ = 0;
  std::optional<std::string> error_;
  std::vector<Span> spans_;  // reused buffer: correlator -> levels
};

}  // namespace skewscope
