// The two functions every agent must compute identically, whatever its build or host:
// the Kafka key of a half (unordered pair of host addresses) and the flow-sampling verdict.
#pragma once

#include <cstdint>
#include <string>

#include "skewscope/half.hpp"

namespace skewscope::exchange {

// "a.b.c.d" for IPv4-mapped addresses, RFC 5952 text for IPv6.
std::string address_text(const Address& a);

// "min|max" of the flow's two host addresses (by byte order), so a message and its reply, sent
// and received on two hosts, all carry one key and land in one partition.
std::string host_pair_key(const FlowKey& flow);

// A hash of the canonical (unordered) 4-tuple: the same for both directions and on every host.
std::uint64_t canonical_flow_hash(const FlowKey& flow);

// Keep 1 connection in `one_in`: both agents keep or both drop, so kept connections pair fully.
inline bool flow_sampled(const FlowKey& flow, std::uint32_t one_in) {
  return one_in <= 1 || canonical_flow_hash(flow) % one_in == 0;
}

}  // namespace skewscope::exchange
