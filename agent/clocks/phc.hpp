// PTP hardware clocks (/sys/class/ptp/ptpN, /dev/ptpN) read against CLOCK_REALTIME, the way
// phc2sys does it, but read-only: the device is opened O_RDONLY and only offset ioctls are used.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "clocks/clock_types.hpp"

namespace skewscope::clocks {

// One (system, PHC, system) reading in ns; the two system reads bracket the PHC read.
struct PhcSample {
  std::int64_t sys_before_ns = 0;
  std::int64_t phc_ns = 0;
  std::int64_t sys_after_ns = 0;
};

struct PhcOffset {
  std::int64_t offset_ns = 0;    // system midpoint - PHC: what to add to a PHC time to get system time
  std::int64_t interval_ns = 0;  // width of the bracket: how well the two were read together
};

// The sample with the shortest bracket wins (least disturbed by preemption or bus latency).
// Samples whose bracket runs backwards are ignored. nullopt when none is usable.
std::optional<PhcOffset> best_sample(std::span<const PhcSample> samples);

enum class PhcMethod : std::uint8_t { kPrecise, kExtended, kBasic };
const char* to_string(PhcMethod);

struct PhcReading {
  std::string clock;  // "ptp0": bounded label value
  std::string name;   // sysfs clock_name, e.g. the driver
  std::optional<PhcOffset> offset;
  std::optional<PhcMethod> method;
  std::optional<ErrorReason> error;
  int sys_errno = 0;
};

// Names of the PHCs (sorted: ptp0, ptp1, ..., ptp10). No directory or an empty one means no
// PHC on this machine: an empty list, not an error.
std::vector<std::string> list_phcs(const std::string& sysfs_dir = "/sys/class/ptp");

// Tries PTP_SYS_OFFSET_PRECISE, then _EXTENDED, then PTP_SYS_OFFSET.
PhcReading read_phc(const std::string& clock, const std::string& sysfs_dir = "/sys/class/ptp",
                    const std::string& dev_dir = "/dev");

}  // namespace skewscope::clocks
