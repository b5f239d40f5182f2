// Everything the outputs (/metrics, /api/v1/status, CLI) show, taken at one instant under the
// agent's lock, so a scrape never sees a half-updated family.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "capture/event_source.hpp"
#include "capture/half_decode.hpp"
#include "correlate/correlator.hpp"
#include "health/health_tracker.hpp"

namespace skewscope {

struct IngestCounters {
  std::uint64_t records = 0;  // every record read from the source, whatever became of it
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(DecodeReject::count_)> rejected{};
  std::uint64_t outside_domains = 0;  // --only-domains: not in any declared domain
  std::uint64_t own_traffic = 0;      // clients talking to this agent's HTTP port
};

struct AgentReport {
  HealthReport health;
  std::vector<std::string> domain_names;  // indexed by DomainId
  SourceCounters source;
  IngestCounters ingest;
  CorrelatorCounters correlator;
  std::size_t pending_sends = 0;
  std::size_t pending_recvs = 0;

  const std::string& name(DomainId id) const { return domain_names.at(id); }
};

}  // namespace skewscope
