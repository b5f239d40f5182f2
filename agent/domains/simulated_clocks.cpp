#include "domains/simulated_clocks.hpp"

#include <algorithm>
#include <cmath>

#include "domains/domain_spec.hpp"
#include "skewscope/saturating.hpp"

namespace skewscope {

void SimulatedClocks::set(DomainId domain, std::int64_t offset_ns, double drift_ppm, std::int64_t anchor_ns) {
  if (settings_.size() <= domain) settings_.resize(domain + 1);
  offset_ns = std::clamp(offset_ns, -kMaxSimulatedOffsetNs, kMaxSimulatedOffsetNs);
  drift_ppm = std::isfinite(drift_ppm) ? std::clamp(drift_ppm, -kMaxSimulatedDriftPpm, kMaxSimulatedDriftPpm) : 0.0;
  settings_[domain] = Setting{offset_ns, drift_ppm, anchor_ns, offset_ns != 0 || drift_ppm != 0};
}

const SimulatedClocks::Setting& SimulatedClocks::setting(DomainId domain) const {
  static const Setting none{};
  return domain < settings_.size() ? settings_[domain] : none;
}

std::int64_t SimulatedClocks::error_ns(DomainId domain, std::int64_t mono_ns) const {
  const Setting& s = setting(domain);
  if (!s.active) return 0;
  const double drift = s.drift_ppm * 1e-6 * static_cast<double>(sat_sub(mono_ns, s.anchor_ns));
  return sat_add(s.offset_ns, sat_round(drift));
}

std::int64_t SimulatedClocks::apply(DomainId domain, std::int64_t mono_ns, std::int64_t real_ns) const {
  return sat_add(real_ns, error_ns(domain, mono_ns));
}

}  // namespace skewscope
