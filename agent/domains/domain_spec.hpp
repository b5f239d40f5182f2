// The --domain and --simulate-clock arguments, parsed without touching the system
// (resolution of paths to namespace/cgroup ids is separate, in domain_registry).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "skewscope/parsed.hpp"

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

// NAME=netns:PATH or NAME=cgroup:PATH
Parsed<DomainSpec> parse_domain_spec(std::string_view text);

// NAME=OFFSET[,DRIFTppm], e.g. infer=+5ms, infer=-250us,+20ppm
Parsed<ClockSimulation> parse_clock_simulation(std::string_view text);

// Domain names become label values and JSON keys: keep them short and plain.
bool is_valid_domain_name(std::string_view name);

}  // namespace skewscope
