#include "clocks/error_bound.hpp"

#include <cmath>

namespace skewscope::clocks {
namespace {

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool is_client_state(std::uint8_t s) {
  return s == static_cast<std::uint8_t>(ptp::PortState::kSlave) ||
         s == static_cast<std::uint8_t>(ptp::PortState::kUncalibrated);
}

bool is_master_state(std::uint8_t s) {
  return s == static_cast<std::uint8_t>(ptp::PortState::kMaster) ||
         s == static_cast<std::uint8_t>(ptp::PortState::kPreMaster) ||
         s == static_cast<std::uint8_t>(ptp::PortState::kGrandMaster);
}

bool is_broken_state(std::uint8_t s) {
  return s == static_cast<std::uint8_t>(ptp::PortState::kFaulty) ||
         s == static_cast<std::uint8_t>(ptp::PortState::kDisabled);
}

// |offset| + one-way delay + GM accuracy, or nullopt without the delay (never guessed). ptp4l
// reports a meanPathDelay of exactly 0 until its first delay measurement, and computes no offset
// before that either: both are unknown then, not zero.
std::optional<double> bound_base(const Ptp4lReading& r) {
  if (!r.time_status || !r.current || r.current->mean_path_delay_scaled == 0) return std::nullopt;
  const double offset = std::fabs(static_cast<double>(r.time_status->master_offset_ns)) / 1e9;
  const double delay = std::fabs(ptp::scaled_ns_to_seconds(r.current->mean_path_delay_scaled));
  double accuracy = 0;
  if (r.parent) accuracy = clock_accuracy_seconds(r.parent->grandmaster_clock_quality.clock_accuracy).value_or(0);
  return offset + delay + accuracy;
}

}  // namespace

bool is_sane_bound(double seconds) { return std::isfinite(seconds) && seconds >= 0 && seconds <= kMaxSaneBoundSeconds; }

std::optional<std::int64_t> bound_seconds_to_ns(std::optional<double> seconds) {
  if (!seconds || !is_sane_bound(*seconds)) return std::nullopt;
  return std::llround(*seconds * 1e9);  // at most 8.64e13: far inside int64
}

std::optional<double> clock_accuracy_seconds(std::uint8_t a) {
  // 0x17..0x31: 1 ps, 2.5 ps, 10 ps, 25 ps, 100 ps, 250 ps, 1 ns, 2.5 ns, 10 ns, 25 ns, ... 10 s.
  // The ranges alternate ×2.5 and ×4 (1, 2.5, 10, 25, 100, ...).
  if (a == 0x30) return 10.0;                     // the ladder ends 1 s, 10 s
  if (a < 0x17 || a > 0x30) return std::nullopt;  // 0x31 is "> 10 s": no upper end
  const int steps = a - 0x17;
  return 1e-12 * std::pow(10.0, steps / 2) * (steps % 2 ? 2.5 : 1.0);
}

const ptp::PortDataSet* primary_port(const Ptp4lReading& r) {
  const ptp::PortDataSet* best = nullptr;
  for (const auto& p : r.ports) {
    if (p.port_state == static_cast<std::uint8_t>(ptp::PortState::kSlave)) return &p;
    if (!best ||
        (p.port_state == static_cast<std::uint8_t>(ptp::PortState::kUncalibrated) && best->port_state != p.port_state))
      best = &p;
  }
  return best;
}

void PtpSourceTracker::on_reading(const Ptp4lReading& reading, SteadyTime now) {
  if (!reading.time_status || reading.ports.empty()) return;
  last_ = reading;
  last_answer_ = now;
  // ingress_time is in ptp4l's time base (a PHC, often TAI), so its age is measured on our
  // monotonic clock from the moment it changed rather than against CLOCK_REALTIME.
  const std::int64_t ingress = reading.time_status->ingress_time_ns;
  if (ingress != 0 && ingress != last_ingress_ns_) {
    last_ingress_ns_ = ingress;
    last_sync_seen_ = now;
  }
  // ptp4l publishes a new meanPathDelay between syncs and only computes master_offset at the next
  // sync: the offset is trusted from the first sync after the delay appeared. A delay back at 0
  // (ptp4l restarted, port reset) starts over.
  const bool has_delay = reading.current && reading.current->mean_path_delay_scaled != 0;
  if (!has_delay) {
    delay_seen_at_ingress_.reset();
    offset_valid_ = false;
  } else if (!delay_seen_at_ingress_) {
    delay_seen_at_ingress_ = ingress;
  } else if (ingress != *delay_seen_at_ingress_) {
    offset_valid_ = true;
  }
  const auto* port = primary_port(reading);
  if (offset_valid_ && port && is_client_state(port->port_state) && reading.time_status->gm_present)
    if (auto base = bound_base(reading); base && is_sane_bound(*base)) last_good_base_ = base;
}

PtpAssessment PtpSourceTracker::assess(SteadyTime now, const BoundConfig& cfg) const {
  PtpAssessment a;
  if (!last_answer_) return a;
  a.ever_answered = true;
  a.data_age_seconds = seconds(now - *last_answer_);
  std::optional<double> sync_age;
  if (last_sync_seen_) sync_age = seconds(now - *last_sync_seen_);
  a.last_sync_age_seconds = sync_age;
  const double stale = std::chrono::duration<double>(cfg.stale_after).count();
  const double drift = cfg.max_drift_ppm / 1e6;
  if (*a.data_age_seconds > stale) return a;  // quiet source: unknown, values withdrawn
  a.fresh = true;

  const auto* port = primary_port(*last_);
  const bool gm = last_->time_status->gm_present;
  // Whether syncs were still arriving is judged as of the last answer: while ptp4l is quiet we
  // cannot see syncs, which is the data-age rule's business, not a disruption of its own.
  const bool synced_recently = last_sync_seen_ && seconds(*last_answer_ - *last_sync_seen_) <= stale;
  if (port && is_master_state(port->port_state)) {
    a.serving = true;
    return a;  // status stays unknown here: the kernel speaks for a master (see combine)
  }
  if (port && is_client_state(port->port_state) && gm && synced_recently) {
    a.status = port->port_state == static_cast<std::uint8_t>(ptp::PortState::kSlave) ? ClockStatus::kSynchronized
                                                                                     : ClockStatus::kFreeRunning;
    if (auto base = bound_base(*last_); base && offset_valid_) a.bound_seconds = *base + drift * *sync_age;
    if (a.bound_seconds && !is_sane_bound(*a.bound_seconds)) {  // a reading nobody can vouch for
      a.status = ClockStatus::kUnknown;
      a.bound_seconds.reset();
    }
    return a;
  }
  // Disrupted once something went wrong: a faulty port, or syncs that stopped after we saw them.
  // A ptp4l that has not measured anything yet (starting up, still LISTENING) stays unknown.
  if (!(port && is_broken_state(port->port_state)) && !last_sync_seen_) return a;
  a.status = ClockStatus::kDisrupted;
  if (last_good_base_ && synced_recently) a.bound_seconds = *last_good_base_ + drift * *sync_age;
  if (a.bound_seconds && !is_sane_bound(*a.bound_seconds)) a.bound_seconds.reset();  // still disrupted
  return a;
}

KernelAssessment assess_kernel(const std::optional<TimexReading>& t) {
  KernelAssessment k;
  if (!t) return k;
  if (t->maxerror_at_cap) return k;  // the kernel itself does not know
  const double bound = t->maxerror_seconds + std::fabs(t->offset_seconds);
  if (!is_sane_bound(bound)) return k;
  k.bound_seconds = bound;
  k.status = t->sync_status ? ClockStatus::kSynchronized : ClockStatus::kFreeRunning;
  return k;
}

HostAssessment combine(std::span<const NamedPtpAssessment> ptp, const KernelAssessment& kernel) {
  const NamedPtpAssessment* best = nullptr;
  for (const auto& s : ptp) {
    const auto& a = s.assessment;
    if (a.status != ClockStatus::kSynchronized && a.status != ClockStatus::kFreeRunning) continue;
    if (!best) {
      best = &s;
      continue;
    }
    const auto& b = best->assessment;
    // A known bound beats an unknown one; then the smaller bound.
    if (a.bound_seconds && (!b.bound_seconds || *a.bound_seconds < *b.bound_seconds)) best = &s;
  }
  if (best) return {best->assessment.status, best->assessment.bound_seconds, "ptp4l:" + best->socket};
  for (const auto& s : ptp)
    if (s.assessment.status == ClockStatus::kDisrupted)
      return {ClockStatus::kDisrupted, s.assessment.bound_seconds, "ptp4l:" + s.socket};
  const HostAssessment from_kernel{kernel.status, kernel.bound_seconds, "timex"};
  for (const auto& s : ptp)
    if (s.assessment.serving) return from_kernel;
  for (const auto& s : ptp)
    if (s.assessment.ever_answered) return {ClockStatus::kUnknown, std::nullopt, "ptp4l:" + s.socket};
  return from_kernel;
}

}  // namespace skewscope::clocks
