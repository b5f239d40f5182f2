// The diagnose stage's inputs gathered from a report (once the clock readings are in), and its
// verdicts put back into it. Lives in the wiring because only the wiring knows every stage.
#pragma once

#include <cstdint>
#include <vector>

#include "core/agent_report.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/pair_history.hpp"

namespace skewscope {

// One estimate as the history keeps it.
diagnose::OffsetSample offset_sample(const estimate::PairEstimate& e);

// Feeds the history with every estimate of one tick, named by domain.
void record_estimates(diagnose::HistoryBook& book, const std::vector<estimate::PairEstimate>& estimates,
                      const std::vector<std::string>& names, std::int64_t now_ns);

// One observation per pair of domains (either orientation, every transport together) and one
// clock per domain; local domains carry this host's clock readings, remote ones their declared bound.
std::vector<diagnose::PairObservation> pair_observations(const AgentReport& report, const diagnose::HistoryBook& book);
std::vector<diagnose::HostClock> host_clocks(const AgentReport& report);

// Runs the diagnosis over the report into report.diagnosis.
// `now_ns`: CLOCK_MONOTONIC of the report, for the age of each change.
void add_diagnosis(AgentReport& report, const diagnose::HistoryBook& book, std::int64_t now_ns);

}  // namespace skewscope
