// The same pair of hosts seen at each timestamp level, side by side: syscall (the main pipeline)
// and, with --wire-timestamps, wire_software and wire_hardware. Each wire level has its own health
// window and its own offset estimator, so its Δt_min and offset interval come from its own spans.
//
// A pair's health and state use the best level that has paired the pair's traffic (wire_hardware,
// then wire_software, then syscall), and the pair says which (`timestamp_source`): stamps closer to the
// wire carry less of the hosts' scheduling and stack latency, so they resolve smaller offsets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimate/estimator.hpp"
#include "health/health_tracker.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

struct LevelPair {
  TimestampSource source = TimestampSource::wire_software;
  PairReport pair;                                 // this level's window, health and state
  std::optional<estimate::PairEstimate> estimate;  // bounds widened by mapping_uncertainty_ns
  std::int64_t mapping_uncertainty_ns = 0;         // hardware: PHC -> system mapping, both ends
};

// What the wire capture did and saw (filled by the agent's wire runtime).
struct WireInterfaceReport {
  std::string name;  // IFACE or IFACE@NETNS_PATH as given
  bool created_qdisc = false;
  int phc_index = -1;
  bool hardware_capable = false;  // ethtool reports hardware receive and transmit stamps
};

struct WireLevelCounters {
  std::uint64_t pairs = 0;
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
  std::uint64_t sends_expired = 0;
  std::uint64_t dropped_table_full = 0;
  std::size_t pending = 0;
};

struct WireReport {
  bool enabled = false;
  std::string error;                // why the wire capture stopped; empty while it runs
  std::string send_path;            // "tc_egress" (see `skewscope doctor`)
  bool rx_timestamps_held = false;  // the agent holds the net_timestamp key (receive stamps)
  std::vector<WireInterfaceReport> interfaces;
  std::uint64_t segments = 0;  // wire halves read
  std::uint64_t ring_buffer_full = 0;
  std::uint64_t not_parsed = 0;
  std::uint64_t malformed_records = 0;
  std::uint64_t rejected = 0;
  std::uint64_t rx_skb_stamped = 0;  // receives with the kernel's receive stamp
  std::uint64_t rx_unstamped = 0;    // receives stamped by the tc program instead
  std::uint64_t hw_stamped = 0;
  std::uint64_t hw_unmapped = 0;  // hardware stamps with no PHC mapping: software level only
  std::uint64_t outside_domains = 0;
  std::uint64_t own_traffic = 0;
  WireLevelCounters software, hardware;
  bool ack_samples = false;  // --wire-ack-samples
  WireLevelCounters acks;    // ACK halves and the reverse samples they paired into
  std::vector<LevelPair> pairs;
};

class LevelHealth {
 public:
  LevelHealth(std::int64_t window_ns, estimate::Config config);

  void add(const Span& span);  // routed by span.timestamp_source (wire levels only)
  void add_losses(std::int64_t now_ns, std::uint64_t halves);
  void note_mapping_uncertainty(std::int64_t ns) { mapping_uncertainty_ns_ = std::max(mapping_uncertainty_ns_, ns); }
  void tick(std::int64_t now_ns);  // once a second: re-evaluates the estimators
  std::vector<LevelPair> report(std::int64_t now_ns, bool capture_up) const;

 private:
  struct Level {
    Level(std::int64_t window_ns, estimate::Config config) : health(window_ns), estimator(config) {}
    HealthTracker health;
    estimate::Estimator estimator;
  };
  Level software_, hardware_;
  std::int64_t mapping_uncertainty_ns_ = 0;  // largest one-end mapping uncertainty seen
};

// The level a pair's health uses: hardware, then software, once it has spans; null: syscall.
const LevelPair* best_level(const std::vector<LevelPair>& levels, const PairKey& key);

// Rewrites each pair's health and state (and the overall health) from its best level.
void apply_best_levels(HealthReport& health, const std::vector<LevelPair>& levels);

}  // namespace skewscope
