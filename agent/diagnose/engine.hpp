// The rule engine: first each pair on its own evidence (cause, amount, confidence), then the
// culprits across pairs by triangulation, then each host's verdict. docs/diagnosis.md writes
// every rule down in the order they are applied here.
#pragma once

#include <vector>

#include "diagnose/diagnosis.hpp"

namespace skewscope::diagnose {

// `src` / `dst`: the two hosts' clock readings, nullptr when nothing is known of them.
PairDiagnosis diagnose_pair(const PairObservation& pair, const HostClock* src, const HostClock* dst,
                            const Config& config);

// Culprits across the pairs (a cause a host's own source names, ptp_lost, is kept), then the
// hosts' verdicts. Runs as well over pair diagnoses gathered from several agents.
DiagnosisReport combine(std::vector<PairDiagnosis> pairs, const std::vector<HostClock>& clocks, const Config& config);

// Both steps over one agent's observations.
DiagnosisReport diagnose(const std::vector<PairObservation>& pairs, const std::vector<HostClock>& clocks,
                         const Config& config);

// The same diagnosis for the opposite orientation (θ, steps, slopes and offsets change sign).
PairDiagnosis reversed(const PairDiagnosis& d);
// "seconds" or "ppm": the unit of a cause's amount and tolerance (drift: ppm).
const char* amount_unit(Cause c);

// A clock's PTP client lost its sync: port left SLAVE/UNCALIBRATED, grandmaster absent, or the
// clocks stage calls it disrupted (holdover).
bool ptp_lost(const HostClock& clock);
// "1.500 ms", "−13 µs", "40 ns": a duration for the evidence lines.
std::string format_ns(double ns);

}  // namespace skewscope::diagnose
