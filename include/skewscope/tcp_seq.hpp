// TCP sequence numbers wrap at 2^32: their order and distance hold while two of them are less
// than 2^31 apart (serial number arithmetic, RFC 1982), far more than any window or capture the
// agent keeps between them. One definition for every stage that orders a stream's bytes.
#pragma once

#include <cstdint>

namespace skewscope {

// The distance from a to b: positive when b is after a.
inline std::int32_t seq_diff(std::uint32_t b, std::uint32_t a) { return static_cast<std::int32_t>(b - a); }
// a precedes b.
inline bool seq_before(std::uint32_t a, std::uint32_t b) { return seq_diff(a, b) < 0; }

}  // namespace skewscope
