#include "clocks/clock_types.hpp"

#include <cerrno>

namespace skewscope::clocks {

std::string_view to_string(ClockStatus s) {
  switch (s) {
    case ClockStatus::kUnknown: return "unknown";
    case ClockStatus::kSynchronized: return "synchronized";
    case ClockStatus::kFreeRunning: return "free_running";
    case ClockStatus::kDisrupted: return "disrupted";
  }
  return "unknown";
}

std::string_view to_string(ErrorReason r) {
  switch (r) {
    case ErrorReason::kMissing: return "missing";
    case ErrorReason::kRefused: return "refused";
    case ErrorReason::kPermission: return "permission";
    case ErrorReason::kTimeout: return "timeout";
    case ErrorReason::kMalformed: return "malformed";
    case ErrorReason::kManagementError: return "management_error";
    case ErrorReason::kUnexpectedReply: return "unexpected_reply";
    case ErrorReason::kUnsupported: return "unsupported";
    case ErrorReason::kIo: return "io";
  }
  return "io";
}

ErrorReason reason_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ENODEV:
    case ENXIO: return ErrorReason::kMissing;
    case ECONNREFUSED: return ErrorReason::kRefused;
    case EACCES:
    case EPERM: return ErrorReason::kPermission;
    // The receiver's queue is full: ptp4l is alive but not reading, which to us is a timeout.
    case EAGAIN:
    case ENOBUFS: return ErrorReason::kTimeout;
    case EOPNOTSUPP:
    case ENOTTY: return ErrorReason::kUnsupported;
    default: return ErrorReason::kIo;
  }
}

}  // namespace skewscope::clocks
