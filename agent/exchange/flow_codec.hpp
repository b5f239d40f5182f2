// Addresses and flows as the exchange records carry them (halves.proto `Flow`, and the bare
// address fields of message halves): 16 raw bytes per address, ports 1..65535. Shared by every
// record codec, so that each rejects a malformed flow the same way.
#pragma once

#include <cstdint>
#include <string>

#include "skewscope/half.hpp"

namespace skewscope::v1 {
class Flow;
}

namespace skewscope::exchange {

// A port as a record may carry it: 1..65535.
inline bool valid_port(std::uint32_t p) { return p > 0 && p <= 0xffff; }

void put_address(std::string* out, const Address& a);
// False when `in` is not exactly one address long.
bool get_address(const std::string& in, Address& a);

void put_flow(v1::Flow* out, const FlowKey& k);
// False (k untouched in its ports) when an address has the wrong length or a port is 0 or > 65535.
bool get_flow(const v1::Flow& f, FlowKey& k);

}  // namespace skewscope::exchange
