// Durations as users write them: 5ms, 250us, 30s, -2ms, +1.5ms, 100ns, 2m.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "skewscope/result.hpp"

namespace skewscope {

// Signed nanoseconds. A unit is required ("5" alone is ambiguous and rejected), except for a bare
// "0" (or "+0", "-0"), which means the same in every unit.
Result<std::int64_t> parse_duration_ns(std::string_view text);

// "5ms" style rendering for messages and tables; exact when possible.
std::string format_duration_ns(std::int64_t ns);

}  // namespace skewscope
