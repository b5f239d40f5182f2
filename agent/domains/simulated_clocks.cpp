#include "domains/simulated_clocks.hpp"

#include <cmath>

namespace skewscope {

void SimulatedClocks::set(DomainId domain, std::int64_t offset_ns, double drift_ppm, std::int64_t anchor_ns) {
  if (settings_.size() <= domain) settings_.resize(domain + 1);
  settings_[domain] = Setting{offset_ns, drift_ppm, anchor_ns, offset_ns != 0 || drift_ppm != 0};
}

const SimulatedClocks::Setting& SimulatedClocks::setting(DomainId domain) const {
  static const Setting none{};
  return domain < settings_.size() ? settings_[domain] : none;
}

std::int64_t SimulatedClocks::error_ns(DomainId domain, std::int64_t mono_ns) const {
  const Setting& s = setting(domain);
  if (!s.active) return 0;
  double drift = s.drift_ppm * 1e-6 * static_cast<double>(mono_ns - s.anchor_ns);
  return s.offset_ns + static_cast<std::int64_t>(std::llround(drift));
}

}  // namespace skewscope
