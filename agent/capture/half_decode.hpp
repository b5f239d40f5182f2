// ABI record -> Half (without domain or wall-clock time: those come from the domains stage).
// Pure: captured records from a file decode the same way as from the ring buffer.
#pragma once

#include <cstdint>
#include <optional>

#include "skewscope/abi/half_event.h"
#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

enum class DecodeReject : std::uint8_t { bad_kind, zero_bytes, zero_port, count_ };
const char* decode_reject_name(DecodeReject r);

using Decoded = Result<Half, DecodeReject>;

Decoded decode_half(const skewscope_half_event& e);

}  // namespace skewscope
