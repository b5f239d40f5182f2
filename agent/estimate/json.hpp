// JSON for the API and `skewscope status --json`: seconds, and null wherever the window does not
// tell (DESIGN.md: "fields that are not yet known are null, never a made-up number").
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "estimate/correct.hpp"
#include "estimate/estimator.hpp"
#include "estimate/triangles.hpp"
#include "estimate/whatif.hpp"

namespace skewscope::estimate {

using DomainName = std::function<std::string(DomainId)>;

// Fields for one entry of the contract's "pairs" array (offset_seconds, offset_bound_seconds, …);
// health merges them into the entry with its own counts. src/dst are included for standalone use.
nlohmann::json to_json(const PairEstimate& e, const DomainName& name);
// The offset and at-risk fields alone (offset_seconds, offset_bound_seconds, offset_missing,
// offset_missing_bound, at_risk, at_risk_basis), by shown_offset's rule; e == nullptr for a pair
// the estimator has nothing on.
nlohmann::json offset_fields(const PairEstimate* e);
nlohmann::json to_json(const TriangleReport& r, const DomainName& name);
nlohmann::json to_json(const WhatIfTable& t, const DomainName& name);
nlohmann::json to_json(const CorrectedSpan& c);
nlohmann::json to_json(const Counters& c);

}  // namespace skewscope::estimate
