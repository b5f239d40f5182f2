#include "clocks/kernel_clock.hpp"

#include <sys/timex.h>

#include <cerrno>
#include <cstdlib>

namespace skewscope::clocks {

TimexReading interpret_timex(const RawTimex& raw) {
  TimexReading r;
  r.nano = (raw.status & STA_NANO) != 0;
  r.offset_seconds = static_cast<double>(raw.offset) / (r.nano ? 1e9 : 1e6);
  r.frequency_ppm = static_cast<double>(raw.freq) / 65536.0;
  r.maxerror_seconds = static_cast<double>(raw.maxerror) / 1e6;
  r.esterror_seconds = static_cast<double>(raw.esterror) / 1e6;
  r.status = raw.status;
  r.unsync = (raw.status & STA_UNSYNC) != 0;
  r.clock_error = (raw.status & STA_CLOCKERR) != 0;
  r.tai_offset_seconds = raw.tai;
  r.state = raw.state;
  r.sync_status = raw.state == TIME_ERROR ? 0 : 1;
  r.maxerror_at_cap = raw.maxerror >= kNtpPhaseLimitUs;
  return r;
}

Result<TimexReading, int> read_kernel_clock() {
  struct timex tx {};
  tx.modes = 0;  // read only: any other value would adjust the clock
  const int state = ::adjtimex(&tx);
  if (state < 0) return Result<TimexReading, int>::fail(errno);
  RawTimex raw;
  raw.offset = tx.offset;
  raw.freq = tx.freq;
  raw.maxerror = tx.maxerror;
  raw.esterror = tx.esterror;
  raw.status = tx.status;
  raw.tai = tx.tai;
  raw.state = state;
  return Result<TimexReading, int>::ok(interpret_timex(raw));
}

}  // namespace skewscope::clocks
