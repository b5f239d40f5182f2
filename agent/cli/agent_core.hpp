// The agent's stages wired in DESIGN.md's order, with no threads and no I/O of its own:
// raw halves -> decode -> domain + clock -> correlate -> health. Production feeds it from the ring
// buffer, tests from a synthetic source; the caller serialises access.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "capture/event_source.hpp"
#include "correlate/correlator.hpp"
#include "domains/domain_registry.hpp"
#include "domains/simulated_clocks.hpp"
#include "health/agent_report.hpp"
#include "health/health_tracker.hpp"

namespace skewscope {

struct AgentCoreConfig {
  CorrelatorLimits limits;
  std::int64_t window_ns = 30'000'000'000;
};

class AgentCore {
 public:
  AgentCore(DomainRegistry domains, AgentCoreConfig config);

  // The agent's own HTTP endpoint: halves of flows to or from it are not application traffic.
  void set_own_endpoint(std::uint16_t port, std::uint32_t netns_ino) {
    own_port_ = port;
    own_netns_ = netns_ino;
  }

  void ingest(const std::vector<skewscope_half_event>& batch);
  // Ages pending halves; call a few times a second with CLOCK_MONOTONIC now.
  void tick(std::int64_t now_ns);

  MonotonicToRealtime& clock_mapping() { return clock_mapping_; }
  SimulatedClocks& simulated_clocks() { return simulated_; }
  const DomainRegistry& domains() const { return domains_; }

  AgentReport report(std::int64_t now_ns, const SourceCounters& source) const;

  // Spans produced by the last ingest() (for stages downstream of health, and for tests).
  const std::vector<Span>& last_spans() const { return spans_; }

 private:
  bool is_own_traffic(const skewscope_half_event& e) const;

  DomainRegistry domains_;
  AgentCoreConfig config_;
  std::optional<std::uint16_t> own_port_;
  std::uint32_t own_netns_ = 0;
  MonotonicToRealtime clock_mapping_;
  SimulatedClocks simulated_;
  Correlator correlator_;
  HealthTracker health_;
  IngestCounters ingest_;
  std::vector<Span> spans_;
};

}  // namespace skewscope
