// Which host addresses belong to this agent: the interface addresses of each of its domains'
// network namespaces, read inside that namespace. A message whose two ends are both owned is
// joined locally; every other half goes to the exchange.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

// Interface addresses (IPv4 as IPv4-mapped IPv6) of the network namespace at `netns_path`, or of
// the caller's own namespace when the path is empty. The netlink dump runs on a short-lived
// thread that setns()es, so no other thread of the agent ever changes namespace.
// An error when the namespace cannot be entered or read.
Result<std::set<Address>> read_netns_addresses(const std::string& netns_path);

class OwnedAddresses {
 public:
  void replace(std::set<Address> addresses) { addresses_ = std::move(addresses); }
  bool owns(const Address& a) const { return addresses_.contains(a); }
  bool is_local(const FlowKey& flow) const { return owns(flow.src_addr) && owns(flow.dst_addr); }
  std::size_t size() const { return addresses_.size(); }

 private:
  std::set<Address> addresses_;
};

}  // namespace skewscope::exchange
