#include "core/agent_report.hpp"

#include <algorithm>

#include "exchange/remote_pairing.hpp"

namespace skewscope {

void add_remote_results(AgentReport& report, exchange::RemoteResults&& remote) {
  for (PairReport& pair : remote.pairs) {
    if (pair.health == 0) report.health.health = 0;
    report.health.pairs.push_back(std::move(pair));
  }
  std::sort(report.health.pairs.begin(), report.health.pairs.end(),
            [](const PairReport& a, const PairReport& b) { return a.key < b.key; });
  for (auto& e : remote.estimates) report.estimates.push_back(std::move(e));
  for (const auto& [id, bound] : remote.domain_bounds_ns)
    if (id < report.domain_clocks.size() && !report.domain_clocks[id].error_bound_ns)
      report.domain_clocks[id].error_bound_ns = bound;
}

}  // namespace skewscope
