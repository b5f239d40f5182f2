// Checks for the agent's numeric options, on the text as typed, before CLI11 converts it. CLI11
// reads "-1" into an unsigned option as SIZE_MAX, and its Range check passes "nan" (every
// comparison with NaN is false), so both are caught here. Each fails with a message naming the
// accepted range (CLI11 validators take its text). Durations are checked in plan_agent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "skewscope/result.hpp"

namespace skewscope {

// Pending halves: ~150 B each, so the cap keeps the table under ~600 MiB.
inline constexpr std::uint64_t kMaxPendingLimit = std::uint64_t{1} << 22;
// Longest --window: health keeps one 1 s bucket per pair per second of window.
inline constexpr std::int64_t kMaxWindowNs = 3'600'000'000'000;
// Longest --send-max-age: a message not received within an hour is not waiting to be paired.
inline constexpr std::int64_t kMaxSendAgeNs = 3'600'000'000'000;

// A plain decimal integer in [min, max]: no sign, no fraction, no exponent, no spaces.
Status check_count(std::string_view text, std::uint64_t min, std::uint64_t max);

// A finite decimal number in [min, max] (NaN and infinities refused).
Status check_finite(std::string_view text, double min, double max);

}  // namespace skewscope
