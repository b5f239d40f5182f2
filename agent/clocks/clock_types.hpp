// Vocabulary shared by the clock readers, the error-bound logic and the renderers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace skewscope::clocks {

// ClockBound's four states; the numbers are the values of skewscope_clock_status.
enum class ClockStatus : std::uint8_t { kUnknown = 0, kSynchronized = 1, kFreeRunning = 2, kDisrupted = 3 };
std::string_view to_string(ClockStatus);

// Why a reading failed. The label values are part of skewscope_clock_source_errors_total.
enum class ErrorReason : std::uint8_t {
  kMissing,          // no socket / device at the path
  kRefused,          // socket file exists, nobody bound to it (ptp4l gone or restarting)
  kPermission,       // EACCES / EPERM
  kTimeout,          // no (complete) answer within the reply timeout
  kMalformed,        // a reply that does not decode, or answers with the wrong id
  kManagementError,  // ptp4l answered with a MANAGEMENT_ERROR_STATUS TLV
  kUnexpectedReply,  // a late, duplicate or foreign reply (dropped, but counted)
  kUnsupported,      // a PHC that implements none of the offset ioctls
  kIo,               // any other system-call failure
};
inline constexpr std::size_t kErrorReasonCount = 9;
std::string_view to_string(ErrorReason);

// Every failure of one round, by reason.
struct ErrorCounts {
  std::array<std::uint32_t, kErrorReasonCount> by_reason{};
  void add(ErrorReason r, std::uint32_t n = 1) { by_reason[static_cast<std::size_t>(r)] += n; }
  std::uint32_t operator[](ErrorReason r) const { return by_reason[static_cast<std::size_t>(r)]; }
};

// Maps a failed system call's errno onto a reason.
ErrorReason reason_from_errno(int err);

}  // namespace skewscope::clocks
