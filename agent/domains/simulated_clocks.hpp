// Lab-only clock error per domain: shifts the timestamps the agent reads, never a system clock.
#pragma once

#include <cstdint>
#include <vector>

#include "skewscope/span.hpp"

namespace skewscope {

class SimulatedClocks {
 public:
  // The domain's clock reads offset_ns ahead of true time at anchor_ns (CLOCK_MONOTONIC), and
  // the error grows by drift_ppm from then on. Setting again replaces the previous simulation.
  // Values beyond kMaxSimulatedOffsetNs / kMaxSimulatedDriftPpm (domain_spec.hpp) are clamped to
  // them: the parser refuses such input, this is the last line of defence.
  void set(DomainId domain, std::int64_t offset_ns, double drift_ppm, std::int64_t anchor_ns);

  // Error of the domain's clock at true time mono_ns (0 for a domain never set). Saturates.
  std::int64_t error_ns(DomainId domain, std::int64_t mono_ns) const;

  // real_ns as the domain's clock reads it at true time mono_ns: real_ns + error, saturated so
  // that no offset can wrap a timestamp into a negative one.
  std::int64_t apply(DomainId domain, std::int64_t mono_ns, std::int64_t real_ns) const;

  struct Setting {
    std::int64_t offset_ns = 0;
    double drift_ppm = 0;
    std::int64_t anchor_ns = 0;
    bool active = false;
  };
  const Setting& setting(DomainId domain) const;

 private:
  std::vector<Setting> settings_;
};

}  // namespace skewscope
