#include "policy/evidence.hpp"

#include <map>
#include <tuple>

namespace skewscope::policy {

std::vector<PairEvidence> covered_evidence(const Policy& policy, const AgentReport& report) {
  // Both directions of a pair share one clock offset: their reports are merged, oriented from the
  // lower domain id to the higher as the estimate is.
  std::map<std::tuple<DomainId, DomainId, Transport>, PairEvidence> merged;
  for (const PairReport& p : report.health.pairs) {
    if (p.key.src == p.key.dst) continue;  // one clock: no offset to judge
    const DomainId low = std::min(p.key.src, p.key.dst), high = std::max(p.key.src, p.key.dst);
    if (low >= report.domain_names.size() || high >= report.domain_names.size()) continue;
    if (!policy.covers(report.name(low), report.name(high), p.key.transport)) continue;
    auto [it, fresh] = merged.try_emplace({low, high, p.key.transport});
    PairEvidence& e = it->second;
    if (fresh) {
      e.src = report.name(low);
      e.dst = report.name(high);
      e.transport = p.key.transport;
      e.capture_up = report.health.capture_up;
      if (const auto* estimate = report.estimate_for(low, high)) {
        e.lower_ns = estimate->lower_ns;
        e.upper_ns = estimate->upper_ns;
      }
      const auto bound = [&report](DomainId d) {
        return d < report.domain_clocks.size() ? report.domain_clocks[d].error_bound_ns : std::nullopt;
      };
      if (bound(low) && bound(high)) e.clock_bound_ns = *bound(low) + *bound(high);
    }
    e.spans += p.window.spans;
    e.negative_spans += p.window.negative_spans;
    e.window_lost_halves = std::max(e.window_lost_halves, p.window_lost_halves);
    e.unpaired = e.unpaired || p.unknown_reason == UnknownReason::halves_unpaired;
    e.window_filling = e.window_filling || p.unknown_reason == UnknownReason::window_filling;
  }
  std::vector<PairEvidence> out;
  for (auto& [key, e] : merged) out.push_back(std::move(e));
  return out;
}

}  // namespace skewscope::policy
