// A snapshot with every field populated (and a socket name that needs escaping), shared by the
// render test and the promtool check.
#pragma once

#include "clocks/clock_snapshot.hpp"

namespace skewscope::clocks::testing {

inline ClockSnapshot populated_snapshot() {
  ClockSnapshot s;
  s.polled = true;
  s.status = ClockStatus::kSynchronized;
  s.error_bound_seconds = 3.5e-6;
  s.bound_source = "ptp4l:/var/run/ptp4l";
  s.max_drift_ppm = 100;
  s.stale_after_seconds = 5;
  PtpSocketSnapshot p;
  p.socket = "/var/run/ptp4l";
  p.status = ClockStatus::kSynchronized;
  p.fresh = true;
  p.master_offset_seconds = -1.5e-6;
  p.mean_path_delay_seconds = 2e-6;
  p.offset_from_master_seconds = -1.5e-6;
  p.port_state = 9;
  p.port_count = 1;
  p.gm_present = true;
  p.gm_identity = "001122.fffe.334455";
  p.steps_removed = 1;
  p.gm_clock_class = 6;
  p.gm_clock_accuracy = 0x21;
  p.last_sync_age_seconds = 0.25;
  p.data_age_seconds = 0.001;
  p.error_bound_seconds = 3.5e-6;
  s.ptp.push_back(p);
  PtpSocketSnapshot q;  // a quiet one with an odd name
  q.socket = "/tmp/we\"ird\\path";
  q.last_error = ErrorReason::kRefused;
  q.last_errno = 111;
  q.last_sync_age_seconds = 12;
  s.ptp.push_back(q);
  PhcReading phc;
  phc.clock = "ptp0";
  phc.name = "fake";
  phc.offset = PhcOffset{-37'000'000'123, 40};
  phc.method = PhcMethod::kExtended;
  s.phc.push_back(phc);
  PhcReading bad;
  bad.clock = "ptp1";
  bad.error = ErrorReason::kUnsupported;
  s.phc.push_back(bad);
  RawTimex raw;
  raw.maxerror = 1500;
  raw.esterror = 20;
  raw.offset = -300;
  raw.status = 0x2001;
  s.timex = interpret_timex(raw);
  s.errors[static_cast<std::size_t>(SourceKind::kPtp4l)][static_cast<std::size_t>(ErrorReason::kRefused)] = 7;
  s.errors[static_cast<std::size_t>(SourceKind::kPhc)][static_cast<std::size_t>(ErrorReason::kUnsupported)] = 3;
  return s;
}

}  // namespace skewscope::clocks::testing
