// One poll's worth of clock readings and what they add up to: the value the renderers and the
// health stage consume. Plain data; unknown values are nullopt, never a placeholder number.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clocks/clock_types.hpp"
#include "clocks/kernel_clock.hpp"
#include "clocks/phc.hpp"

namespace skewscope::clocks {

// The `source` label of skewscope_clock_source_errors_total.
enum class SourceKind : std::uint8_t { kPtp4l, kPhc, kTimex };
inline constexpr std::size_t kSourceKindCount = 3;
std::string_view to_string(SourceKind);

struct PtpSocketSnapshot {
  std::string socket;
  ClockStatus status = ClockStatus::kUnknown;
  bool fresh = false;                     // answered within stale_after; the values below are withdrawn otherwise
  bool serving = false;                   // this host is the PTP master on that instance
  std::optional<ErrorReason> last_error;  // the last round's failure, nullopt when it succeeded
  int last_errno = 0;
  std::optional<double> master_offset_seconds;       // TIME_STATUS_NP.master_offset
  std::optional<double> mean_path_delay_seconds;     // CURRENT_DATA_SET.meanPathDelay
  std::optional<double> offset_from_master_seconds;  // CURRENT_DATA_SET.offsetFromMaster
  std::optional<int> port_state;                     // of primary_port()
  std::optional<int> port_count;
  std::optional<bool> gm_present;
  std::optional<std::string> gm_identity;
  std::optional<int> steps_removed;
  std::optional<int> gm_clock_class;
  std::optional<int> gm_clock_accuracy;
  std::optional<double> last_sync_age_seconds;  // kept while quiet: it is still true, and grows
  std::optional<double> data_age_seconds;
  std::optional<double> error_bound_seconds;
};

struct ClockSnapshot {
  bool polled = false;  // false until the first poll()
  std::vector<PtpSocketSnapshot> ptp;
  std::vector<PhcReading> phc;
  std::optional<TimexReading> timex;
  std::optional<ErrorReason> timex_error;
  // The host.
  ClockStatus status = ClockStatus::kUnknown;
  std::optional<double> error_bound_seconds;
  std::string bound_source;  // "ptp4l:<socket>", "timex" or ""
  double max_drift_ppm = 0;
  double stale_after_seconds = 0;
  // Cumulative since the monitor started.
  std::array<std::array<std::uint64_t, kErrorReasonCount>, kSourceKindCount> errors{};

  std::uint64_t error_count(SourceKind s, ErrorReason r) const {
    return errors[static_cast<std::size_t>(s)][static_cast<std::size_t>(r)];
  }
};

}  // namespace skewscope::clocks
