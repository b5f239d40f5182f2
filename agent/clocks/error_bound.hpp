// Per-host clock error bound and status, from what ptp4l and the kernel report.
//
// The bound is a half-width: this host's CLOCK_REALTIME is within ±bound of its reference
// (the PTP grandmaster, or whatever disciplines the kernel clock). In the spirit of chrony
// (|offset| + root_delay/2 + root_dispersion), AWS ClockBound (that, plus max_drift × age) and
// Meta's fbclock (|offset| + clockAccuracy + drift × (now − ingress)):
//
//   PTP client (port SLAVE or UNCALIBRATED, gmPresent, a sync seen within stale_after):
//     bound = |master_offset| + mean_path_delay + gm_accuracy + max_drift × sync_age
//       |master_offset|   offset from the master measured at the last sync (TIME_STATUS_NP)
//       mean_path_delay   CURRENT_DATA_SET.meanPathDelay: one-way delay = RTT/2, which is the
//                         worst error a fully asymmetric path can hide (chrony's root_delay/2).
//                         0 means "not measured yet" (ptp4l computes no offset then either):
//                         the bound is unknown (null) until a sync has followed the first
//                         delay measurement (before that, master_offset is still ptp4l's 0)
//       gm_accuracy       the grandmaster's clockAccuracy (PARENT_DATA_SET), 0 when it declares
//                         none (0xFE): the bound is then relative to the grandmaster
//       sync_age          time since the agent saw TIME_STATUS_NP.ingress_time change; on the
//                         first reading it starts at 0 (a lower bound, resolved to one poll)
//     status = synchronized for SLAVE, free_running for UNCALIBRATED (a `free_running 1` slave
//     measures its offset but never corrects it: a known, growing error, not a failure).
//   Kernel (no PTP client reading; e.g. NTP/chrony, or this host is the PTP master):
//     bound = maxerror + |offset| from adjtimex. The kernel grows maxerror by 500 ppm every
//     second by itself, so no drift term is added. status = synchronized when adjtimex does not
//     return TIME_ERROR; free_running when it does but maxerror is below the kernel's 16 s cap;
//     unknown (bound null) at the cap, where the value means "nobody knows".
//
// Sanity: a bound beyond kMaxSaneBoundSeconds (1 day) is not a measurement but a broken or
// hostile reading (a master_offset near INT64_MIN alone makes 292 years). Such a source is
// unknown (a client's synchronized / free_running is withdrawn), its bound null, and it is never
// kept as the holdover base. No clock worth a status is a day off its reference, and a day in ns
// is far from the int64 limit, so the agent's ns arithmetic on bounds cannot overflow.
//
// Decay: a ptp4l reading is fresh while the last complete answer is at most stale_after old
// (default 5 s, ptpcheck's "fail" threshold for sync age). Past that the source is unknown and
// its values are withdrawn (null), never held at their last value. A client whose sync age
// passes stale_after, or whose port is FAULTY / LISTENING / ... is disrupted; while its last sync
// is recent its bound keeps growing from the last good one (holdover). Status changes are seen
// at the next poll, so a dead ptp4l turns unknown within stale_after + one poll interval.
// A ptp4l that answers but has not synced yet (starting up, LISTENING) is unknown, not disrupted;
// FAULTY and DISABLED ports are disrupted from the start.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>

#include "clocks/clock_types.hpp"
#include "clocks/kernel_clock.hpp"
#include "clocks/ptp4l_client.hpp"

namespace skewscope::clocks {

using SteadyTime = std::chrono::steady_clock::time_point;

inline constexpr double kMaxSaneBoundSeconds = 86400;

// A finite, non-negative bound no larger than kMaxSaneBoundSeconds.
bool is_sane_bound(double seconds);

// The host bound in seconds as the agent's ns, or nullopt when it is missing or not sane (NaN,
// negative, beyond kMaxSaneBoundSeconds). A plain static_cast of seconds·1e9 is undefined past
// the int64 range and in practice turns a huge bound negative.
std::optional<std::int64_t> bound_seconds_to_ns(std::optional<double> seconds);

struct BoundConfig {
  double max_drift_ppm = 100;  // a crystal's worst case; ClockBound's default is 15 ppm for chrony
  std::chrono::nanoseconds stale_after = std::chrono::seconds(5);
};

// Seconds a grandmaster's declared clockAccuracy stands for (upper end of its range, IEEE
// 1588-2019 Table 5); nullopt for "unknown" (0xFE) and for reserved values.
std::optional<double> clock_accuracy_seconds(std::uint8_t accuracy);

// The port that speaks for a ptp4l instance: the SLAVE port, else an UNCALIBRATED one, else
// the first. nullptr when the reading has no port.
const ptp::PortDataSet* primary_port(const Ptp4lReading& r);

struct PtpAssessment {
  ClockStatus status = ClockStatus::kUnknown;
  bool ever_answered = false;
  bool fresh = false;    // the last complete answer is at most stale_after old
  bool serving = false;  // fresh, and this host is the master (MASTER / PRE_MASTER / GRAND_MASTER)
  std::optional<double> bound_seconds;
  std::optional<double> last_sync_age_seconds;  // since the last ingress_time change we saw
  std::optional<double> data_age_seconds;       // since the last complete answer
};

// What the agent knows about one ptp4l instance, over time. Time is an input: tests drive it.
class PtpSourceTracker {
 public:
  // A complete answer (TIME_STATUS_NP and at least one port). Anything less is a failure.
  void on_reading(const Ptp4lReading& reading, SteadyTime now);
  PtpAssessment assess(SteadyTime now, const BoundConfig& cfg) const;

  // The last complete answer, whatever its age.
  const std::optional<Ptp4lReading>& last_reading() const { return last_; }

 private:
  std::optional<Ptp4lReading> last_;
  std::optional<SteadyTime> last_answer_;
  std::optional<std::int64_t> last_ingress_ns_;
  std::optional<SteadyTime> last_sync_seen_;
  // |offset| + delay + accuracy of the last client-side reading, for holdover.
  std::optional<double> last_good_base_;
  std::optional<std::int64_t> delay_seen_at_ingress_;  // ingress_time when the delay first showed
  bool offset_valid_ = false;                          // a sync has followed the delay
};

struct KernelAssessment {
  ClockStatus status = ClockStatus::kUnknown;
  std::optional<double> bound_seconds;
};
KernelAssessment assess_kernel(const std::optional<TimexReading>& timex);

struct NamedPtpAssessment {
  std::string socket;
  PtpAssessment assessment;
};

struct HostAssessment {
  ClockStatus status = ClockStatus::kUnknown;
  std::optional<double> bound_seconds;
  std::string source;  // "ptp4l:<socket>", "timex", or "" when nothing speaks for the clock
};

// Which source speaks for the host, in order:
//  1. a fresh PTP client (synchronized or free_running): the one with the smallest bound;
//  2. a fresh but disrupted ptp4l: disrupted, with its holdover bound if it has one;
//  3. a fresh ptp4l that is master: the kernel (a grandmaster's own discipline);
//  4. a ptp4l that answered before and is now quiet: unknown. Its clients may still be
//     disciplining the kernel (phc2sys keeps maxerror near 0), so the kernel can't vouch;
//  5. otherwise the kernel.
HostAssessment combine(std::span<const NamedPtpAssessment> ptp, const KernelAssessment& kernel);

}  // namespace skewscope::clocks
