// Field values every linuxptp management message carries (common header, management TLV types),
// shared by the decoder and the encoder; internal to agent/clocks (the API is ptp_management.hpp).
#pragma once

#include <cstdint>

namespace skewscope::clocks::ptp {

inline constexpr std::uint8_t kMessageTypeManagement = 0x0D;
inline constexpr std::uint8_t kVersionPtp = 2;
inline constexpr std::uint8_t kControlManagement = 0x04;
inline constexpr std::uint8_t kLogIntervalManagement = 0x7F;
inline constexpr std::uint16_t kTlvManagement = 0x0001;
inline constexpr std::uint16_t kTlvManagementError = 0x0002;

}  // namespace skewscope::clocks::ptp
