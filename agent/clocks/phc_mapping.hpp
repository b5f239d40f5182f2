// NIC hardware stamps (the PHC's timescale) -> the system clock (CLOCK_REALTIME), with a bound.
//
// Readings come from the PHC readers in phc.hpp (PTP_SYS_OFFSET_PRECISE, else _EXTENDED, else
// PTP_SYS_OFFSET): each gives `system - PHC` at one instant, read within a bracket of some width.
// A stamp between two readings is mapped with the offset interpolated between them (the PHC and
// the system clock each run at a near-constant rate over a second); a stamp after the newest
// reading is extrapolated along the last measured rate. The uncertainty of a mapped stamp is the
// half-bracket of the readings used, plus how far the rate may have wandered since them
// (max_rate_change_ppm times the distance to the nearest reading), plus, with a single reading,
// max_rate_ppm times that distance (no rate measured yet). The wire level widens a pair's offset
// bound by the uncertainty of both ends.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "clocks/phc.hpp"

namespace skewscope::clocks {

struct PhcReadingPoint {
  std::int64_t phc_ns = 0;           // PHC time of the reading
  std::int64_t offset_ns = 0;        // system - PHC at that instant
  std::int64_t half_bracket_ns = 0;  // half the width of the system bracket around the PHC read
};

// A reading from phc.hpp's PhcOffset taken at system time sys_ns (the bracket's midpoint).
PhcReadingPoint reading_from(const PhcOffset& offset, std::int64_t sys_ns);
// A reading from one raw (system, PHC, system) triple, as PTP_SYS_OFFSET_EXTENDED returns them.
std::optional<PhcReadingPoint> reading_from(const PhcSample& sample);

struct PhcMappingConfig {
  double max_rate_ppm = 500;                          // |PHC rate - system rate| assumed before a rate is measured
  double max_rate_change_ppm = 1;                     // how far that rate may wander between readings
  std::int64_t max_extrapolation_ns = 5'000'000'000;  // older readings: no mapping (nullopt)
  std::size_t keep = 16;                              // readings kept
};

struct MappedStamp {
  std::int64_t system_ns = 0;
  std::int64_t uncertainty_ns = 0;  // |true system time - system_ns| is at most this
};

class PhcMapping {
 public:
  explicit PhcMapping(PhcMappingConfig config = {}) : config_(config) {}

  // Readings must come in increasing PHC time; an older or equal one is ignored (false). A PHC
  // that was stepped (its offset jumps by more than the rate bounds allow) starts over.
  bool add(const PhcReadingPoint& reading);
  std::optional<MappedStamp> map(std::int64_t phc_ns) const;
  std::size_t size() const { return readings_.size(); }
  std::uint64_t restarts() const { return restarts_; }

 private:
  PhcMappingConfig config_;
  std::deque<PhcReadingPoint> readings_;
  std::uint64_t restarts_ = 0;
};

}  // namespace skewscope::clocks
