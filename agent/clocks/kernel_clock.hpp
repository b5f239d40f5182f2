// The kernel's view of CLOCK_REALTIME discipline, read with adjtimex(modes = 0): reading needs no
// privilege and changes nothing. Nothing in skewscope ever calls a writing adjtimex.
#pragma once

#include <cstdint>
#include <optional>

#include "skewscope/result.hpp"

namespace skewscope::clocks {

// The struct timex fields we use, as the syscall returned them (kept separate from the
// interpretation so the interpretation is a pure, testable function).
struct RawTimex {
  long long offset = 0;    // µs, or ns when STA_NANO
  long long freq = 0;      // ppm scaled by 2^16
  long long maxerror = 0;  // µs
  long long esterror = 0;  // µs
  int status = 0;          // STA_* bits
  int tai = 0;             // TAI - UTC in s; 0 = not set
  int state = 0;           // adjtimex return: TIME_OK .. TIME_ERROR
};

// The kernel caps maxerror at NTP_PHASE_LIMIT (16 s) and then sets STA_UNSYNC: at the cap the
// value says "nobody knows", not "within 16 s".
inline constexpr long long kNtpPhaseLimitUs = 16'000'000;

struct TimexReading {
  double offset_seconds = 0;     // remaining phase correction (node_timex_offset_seconds)
  double frequency_ppm = 0;      // frequency correction
  double maxerror_seconds = 0;   // node_timex_maxerror_seconds
  double esterror_seconds = 0;   // node_timex_estimated_error_seconds (phc2sys never sets it)
  int status = 0;                // raw STA_* bits
  bool unsync = false;           // STA_UNSYNC
  bool clock_error = false;      // STA_CLOCKERR
  bool nano = false;             // STA_NANO: offset was in ns
  int tai_offset_seconds = 0;    // node_timex_tai_offset_seconds
  int state = 0;                 // adjtimex return value
  int sync_status = 0;           // node_timex_sync_status: 0 when the call returned TIME_ERROR
  bool maxerror_at_cap = false;  // maxerror reached NTP_PHASE_LIMIT
  // CLOCK_TAI (and bpf_ktime_get_tai_ns) only differ from CLOCK_REALTIME once someone set it.
  bool tai_valid() const { return tai_offset_seconds > 0; }
};

TimexReading interpret_timex(const RawTimex& raw);

// adjtimex(modes = 0). On failure the error is the errno (the monitor counts errors by reason).
Result<TimexReading, int> read_kernel_clock();

}  // namespace skewscope::clocks
