// ABI record -> Half (without domain or wall-clock time: those come from the domains stage).
// Pure: captured records from a file decode the same way as from the ring buffer.
#pragma once

#include <cstdint>
#include <optional>

#include "skewscope/abi/half_event.h"
#include "skewscope/half.hpp"

namespace skewscope {

enum class DecodeReject : std::uint8_t { bad_kind, zero_bytes, zero_port, count_ };
const char* decode_reject_name(DecodeReject r);

struct Decoded {
  std::optional<Half> half;
  DecodeReject reject = DecodeReject::bad_kind;  // meaningful only when !half
};

Decoded decode_half(const skewscope_half_event& e);

}  // namespace skewscope
