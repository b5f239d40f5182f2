#include "core/agent_report.hpp"

#include <algorithm>

#include "exchange/remote_pairing.hpp"

namespace skewscope {

void add_remote_results(AgentReport& report, exchange::RemoteResults&& remote) {
  for (PairReport& pair : remote.pairs) report.health.pairs.push_back(std::move(pair));
  // The halves consumed from the exchange count toward the floor like local ones. A domain seen
  // both ways (the owner's own halves also travel through Kafka) shows the sum, and is below the
  // floor when either share is: a large local share must not hide cross-host halves that do not
  // pair (the remote pairs were judged on theirs alone).
  auto& pairing = report.health.pairing;
  for (const DomainPairing& d : remote.pairing) {
    auto same =
        std::find_if(pairing.begin(), pairing.end(), [&](const DomainPairing& p) { return p.domain == d.domain; });
    if (same == pairing.end()) {
      pairing.push_back(d);
      continue;
    }
    same->paired_halves += d.paired_halves;
    same->unpaired_halves += d.unpaired_halves;
    same->below_floor = same->below_floor || d.below_floor;
  }
  std::sort(pairing.begin(), pairing.end(),
            [](const DomainPairing& a, const DomainPairing& b) { return a.domain < b.domain; });
  std::sort(report.health.pairs.begin(), report.health.pairs.end(),
            [](const PairReport& a, const PairReport& b) { return a.key < b.key; });
  decide_overall(report.health);  // the remote pairs count as the local ones do
  for (auto& e : remote.estimates) report.estimates.push_back(std::move(e));
  for (const auto& [id, bound] : remote.domain_bounds_ns)
    if (id < report.domain_clocks.size() && !report.domain_clocks[id].error_bound_ns)
      report.domain_clocks[id].error_bound_ns = bound;
}

}  // namespace skewscope
