// The report an agent core makes of what its exchange owner paired: the owner's results merged
// into an otherwise empty report over `domains`, as AgentCore::report does (add_remote_results).
// Shared by the exchange tests of tests/unit/core/.
#pragma once

#include <cstdint>

#include "core/agent_report.hpp"
#include "domains/domain_registry.hpp"
#include "exchange/remote_pairing.hpp"

namespace skewscope::test {

inline AgentReport remote_report(const exchange::RemotePairing& owner, const DomainRegistry& domains,
                                 std::int64_t now_ns) {
  AgentReport r;
  r.domain_clocks.resize(domains.size());
  add_remote_results(r, owner.results(now_ns));
  return r;
}

}  // namespace skewscope::test
