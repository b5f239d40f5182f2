// The --domain and --simulate-clock arguments, parsed without touching the system
// (resolution of paths to namespace/cgroup ids is separate, in domain_registry).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "skewscope/result.hpp"

namespace skewscope {

struct DomainSpec {
  enum class Kind { netns, cgroup };
  std::string name;
  Kind kind = Kind::netns;
  std::string path;
};

struct ClockSimulation {
  std::string domain;
  std::int64_t offset_ns = 0;  // how far the domain's clock reads ahead of true time
  double drift_ppm = 0;        // how fast that offset grows, from the moment it is set
};

// Limits of a simulated clock error. The offset is added to every timestamp of its domain: ±1 day
// keeps any realistic timestamp far from the int64 limits and is far beyond any clock error worth
// simulating. Real oscillators drift well within ±100 ppm and the kernel slews at most ±500 ppm:
// ±1000 ppm covers every real clock with margin.
inline constexpr std::int64_t kMaxSimulatedOffsetNs = 86'400'000'000'000;
inline constexpr double kMaxSimulatedDriftPpm = 1000;

// NAME=netns:PATH or NAME=cgroup:PATH
Result<DomainSpec> parse_domain_spec(std::string_view text);

// NAME=OFFSET[,DRIFTppm], e.g. infer=+5ms, infer=-250us,+20ppm; refused beyond the limits above.
Result<ClockSimulation> parse_clock_simulation(std::string_view text);

// Domain names become label values and JSON keys: keep them short and plain.
bool is_valid_domain_name(std::string_view name);

}  // namespace skewscope
