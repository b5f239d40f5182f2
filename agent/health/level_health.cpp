#include "health/level_health.hpp"

#include <algorithm>

namespace skewscope {

LevelHealth::LevelHealth(std::int64_t window_ns, estimate::Config config)
    : software_(window_ns, config), hardware_(window_ns, config) {}

void LevelHealth::add(const Span& span) {
  if (span.timestamp_source == TimestampSource::syscall) return;
  Level& level = span.timestamp_source == TimestampSource::wire_hardware ? hardware_ : software_;
  level.health.add(span);
  level.estimator.observe(span);
}

void LevelHealth::add_losses(std::int64_t now_ns, std::uint64_t halves) {
  software_.health.add_losses(now_ns, halves);
  hardware_.health.add_losses(now_ns, halves);
}

void LevelHealth::tick(std::int64_t now_ns) {
  software_.estimator.tick(now_ns);
  hardware_.estimator.tick(now_ns);
}

namespace {
// A hardware span's two ends were each mapped PHC -> system with some uncertainty: the offset
// interval can only be trusted that much wider on each side.
void widen(estimate::PairEstimate& e, double by_ns) {
  if (by_ns <= 0) return;
  if (e.lower_ns) *e.lower_ns -= by_ns;
  if (e.upper_ns) *e.upper_ns += by_ns;
  if (e.bound_ns) *e.bound_ns += by_ns;
}
}  // namespace

std::vector<LevelPair> LevelHealth::report(std::int64_t now_ns, bool capture_up) const {
  std::vector<LevelPair> out;
  for (TimestampSource source : {TimestampSource::wire_software, TimestampSource::wire_hardware}) {
    const Level& level = source == TimestampSource::wire_hardware ? hardware_ : software_;
    std::function<bool(const PairKey&)> at_risk = [&level](const PairKey& k) {
      auto e = level.estimator.estimate(k.src, k.dst);
      return e && e->at_risk;
    };
    HealthReport h = level.health.report(now_ns, at_risk);
    for (auto& p : h.pairs) {
      LevelPair lp;
      lp.source = source;
      lp.pair = p;
      if (!capture_up) {
        lp.pair.health = std::nullopt;
        lp.pair.state = PairState::unknown;
      }
      lp.estimate = level.estimator.estimate(p.key.src, p.key.dst);
      if (source == TimestampSource::wire_hardware) {
        lp.mapping_uncertainty_ns = 2 * mapping_uncertainty_ns_;
        if (lp.estimate) widen(*lp.estimate, static_cast<double>(lp.mapping_uncertainty_ns));
      }
      out.push_back(std::move(lp));
    }
  }
  return out;
}

const LevelPair* best_level(const std::vector<LevelPair>& levels, const PairKey& key) {
  const LevelPair* best = nullptr;
  for (const auto& l : levels) {
    if (!(l.pair.key == key) || l.pair.spans == 0) continue;
    if (!best || l.source == TimestampSource::wire_hardware) best = &l;
  }
  return best;
}

void apply_best_levels(HealthReport& health, const std::vector<LevelPair>& levels) {
  if (levels.empty()) return;
  for (auto& p : health.pairs) {
    const LevelPair* best = best_level(levels, p.key);
    if (!best) continue;
    // The pairing floor is a verdict on the domains' syscall capture, whatever level pairs best:
    // it stays unless the better level saw a violation.
    if (p.unknown_reason == UnknownReason::halves_unpaired && best->pair.health != 0) continue;
    p.health = best->pair.health;
    p.state = best->pair.state;
    p.unknown_reason = best->pair.unknown_reason;
  }
  decide_overall(health);
}

}  // namespace skewscope
