// NIC completion stamps -> the host's CLOCK_MONOTONIC, for receive halves of extended CQs.
//
// A completion's read_completion_ts is a count of the NIC's own clock (device cycles). The only
// relation of that clock to the host's an application exposes is ibv_query_rt_values_ex: the
// NIC's raw clock now. The capture probes the provider's query_rt_values at entry and return, so
// each call is a sample (raw, [before, after] in CLOCK_MONOTONIC): the read happened somewhere in
// that bracket. Two samples give the rate (cycles per host ns) and one the offset, each taken
// at its bracket's end (rdma_nic_clock.cpp says why); a stamp is mapped from the narrowest
// recent sample, with an error bound from the brackets. Nothing is
// assumed about the frequency: it is measured, so a NIC that drifts against the host is followed.
// read_completion_wallclock_ns is nanoseconds of the NIC's real-time clock (mlx5: its PHC in
// real-time mode), taken to be in CLOCK_REALTIME's time scale and mapped with the host's own
// realtime - monotonic difference. Whatever cannot be mapped, or maps outside the window a
// completion can have happened in (before the poll that returned it, not ages before), keeps the
// probe's time and is counted by reason. Pure: samples and stamps in, numbers out.
#pragma once

#include <cstdint>
#include <deque>

#include "skewscope/abi/rdma_event.h"
#include "skewscope/result.hpp"

namespace skewscope::rdma {

struct NicClockSample {
  std::uint64_t raw = 0;                     // the NIC's raw clock (ibv_values_ex.raw_clock)
  std::int64_t before_ns = 0, after_ns = 0;  // CLOCK_MONOTONIC at query_rt_values entry / return
};

struct NicMapping {
  std::int64_t monotonic_ns = 0;
  std::int64_t error_bound_ns = 0;  // from the samples' brackets (up to the anchor's width late), plus
                                    // the rate's uncertainty over the distance mapped
};

enum class NicMapError { no_samples, one_sample, short_baseline };

class NicClock {
 public:
  static constexpr std::size_t kMaxSamples = 64;
  static constexpr std::int64_t kWindowNs = 60'000'000'000;  // the rate is measured over at most this
  static constexpr std::int64_t kMinBaselineNs = 1'000'000;  // ... and at least this
  static constexpr std::size_t kAnchorCandidates = 4;  // rate and offset from the narrowest of the oldest / newest few

  // False when the sample is rejected: an inverted bracket or one overlapping the previous (not
  // kept), or a raw clock that went backwards or stood still while the host's advanced (a reset:
  // the history is dropped and this sample starts a new one).
  bool add(const NicClockSample& sample);
  Result<NicMapping, NicMapError> to_monotonic(std::uint64_t raw) const;
  std::size_t samples() const { return samples_.size(); }
  std::int64_t last_sample_ns() const { return samples_.empty() ? 0 : samples_.back().after_ns; }

 private:
  std::deque<NicClockSample> samples_;
};

const char* nic_map_error_name(NicMapError e);

// How a half was stamped.
enum class StampOutcome {
  probe,           // a send, or a receive of a plain CQ: the probe's time, as always
  nic_completion,  // read_completion_ts, mapped with clock samples
  nic_wallclock,   // read_completion_wallclock_ns, mapped with the host's realtime - monotonic
  no_clock,        // raw stamp, but too few samples of its NIC's clock: the probe's time
  implausible,     // mapped outside [probe - kMaxCompletionAgeNs, probe + error bound]: the probe's time
  not_read,        // the CQ offers a stamp the application did not read for this completion
};

inline constexpr std::int64_t kMaxCompletionAgeNs = 10'000'000'000;  // a completion polled 10 s late is not believed
inline constexpr std::int64_t kWallclockToleranceNs = 1'000'000;     // NIC real-time clock vs host realtime

// Sets e.ts_ns and e.ts_source from the RECV's NIC stamp when it maps plausibly; otherwise
// leaves the probe's time (ts_source probe). `clock`: samples of the NIC clock of e.context in
// e.pid, or null. `realtime_minus_monotonic_ns`: the host's clocks' difference now.
StampOutcome resolve_stamp(skewscope_rdma_event& e, const NicClock* clock, std::int64_t realtime_minus_monotonic_ns);

}  // namespace skewscope::rdma
