// Output forms of a ClockSnapshot: Prometheus text (0.0.4), JSON, and the `skewscope clocks` table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "clocks/clock_snapshot.hpp"

namespace skewscope::clocks {

// Appends the skewscope_ptp_*, skewscope_phc_*, skewscope_timex_*, skewscope_clock_* families,
// each with HELP and TYPE. A sample whose value is unknown is left out (no made-up numbers);
// the families and the error counters for known reasons are always present.
void append_prometheus(const ClockSnapshot& s, std::string& out);

// Unknown values are null.
nlohmann::json to_json(const ClockSnapshot& s);

// Human-readable, for `skewscope clocks`.
std::string render_table(const ClockSnapshot& s);

}  // namespace skewscope::clocks
