#include "domains/domain_spec.hpp"

#include <charconv>
#include <cmath>

#include "domains/duration.hpp"

namespace skewscope {

bool is_valid_domain_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

namespace {

// Splits NAME=REST and validates NAME.
template <class T>
bool split_name(std::string_view text, std::string_view what, std::string_view& name, std::string_view& rest,
                Result<T>& failure) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    failure = Result<T>::fail(std::string(what) + " '" + std::string(text) + "' has no '='");
    return false;
  }
  name = text.substr(0, eq);
  rest = text.substr(eq + 1);
  if (!is_valid_domain_name(name)) {
    failure = Result<T>::fail("domain name '" + std::string(name) +
                              "' must be 1-63 characters of letters, digits, '_', '-', '.'");
    return false;
  }
  return true;
}

}  // namespace

Result<DomainSpec> parse_domain_spec(std::string_view text) {
  Result<DomainSpec> failure;
  std::string_view name, rest;
  if (!split_name(text, "domain spec", name, rest, failure)) return failure;
  DomainSpec spec;
  spec.name = std::string(name);
  if (rest.starts_with("netns:")) {
    spec.kind = DomainSpec::Kind::netns;
    rest.remove_prefix(6);
  } else if (rest.starts_with("cgroup:")) {
    spec.kind = DomainSpec::Kind::cgroup;
    rest.remove_prefix(7);
  } else {
    return Result<DomainSpec>::fail("domain spec '" + std::string(text) +
                                    "' must be NAME=netns:PATH or NAME=cgroup:PATH");
  }
  if (rest.empty() || rest.front() != '/')
    return Result<DomainSpec>::fail("domain spec '" + std::string(text) + "' needs an absolute path");
  spec.path = std::string(rest);
  return Result<DomainSpec>::ok(spec);
}

Result<ClockSimulation> parse_clock_simulation(std::string_view text) {
  Result<ClockSimulation> failure;
  std::string_view name, rest;
  if (!split_name(text, "clock simulation", name, rest, failure)) return failure;
  ClockSimulation sim;
  sim.domain = std::string(name);
  std::string_view offset_text = rest, drift_text;
  if (auto comma = rest.find(','); comma != std::string_view::npos) {
    offset_text = rest.substr(0, comma);
    drift_text = rest.substr(comma + 1);
  }
  auto offset = parse_duration_ns(offset_text);
  if (!offset) return Result<ClockSimulation>::fail(offset.error);
  if (*offset > kMaxSimulatedOffsetNs || *offset < -kMaxSimulatedOffsetNs)
    return Result<ClockSimulation>::fail("clock offset '" + std::string(offset_text) +
                                         "' is out of range: a simulated offset must be within ±24h");
  sim.offset_ns = *offset;
  if (!drift_text.empty()) {
    if (!drift_text.ends_with("ppm"))
      return Result<ClockSimulation>::fail("drift '" + std::string(drift_text) + "' must end in ppm, e.g. +20ppm");
    drift_text.remove_suffix(3);
    if (!drift_text.empty() && drift_text.front() == '+') drift_text.remove_prefix(1);
    double ppm = 0;
    auto [end, ec] = std::from_chars(drift_text.data(), drift_text.data() + drift_text.size(), ppm);
    if (ec != std::errc() || end != drift_text.data() + drift_text.size() || !std::isfinite(ppm))
      return Result<ClockSimulation>::fail("malformed drift in '" + std::string(text) + "' (e.g. +20ppm)");
    if (std::fabs(ppm) > kMaxSimulatedDriftPpm)
      return Result<ClockSimulation>::fail("drift in '" + std::string(text) +
                                           "' is out of range: a simulated drift must be within ±1000ppm");
    sim.drift_ppm = ppm;
  }
  return Result<ClockSimulation>::ok(sim);
}

}  // namespace skewscope
