// Corrected timestamps as extra fields. Jaeger's and Zipkin's skew adjusters rewrite timestamps
// with a midpoint guess and lost their users' trust; here the raw timestamps always stay, the
// correction is a separate field, flagged, and capped.
#pragma once

#include <cstdint>
#include <optional>

#include "estimate/estimator.hpp"

namespace skewscope::estimate {

struct CorrectedSpan {
  std::int64_t send_ns = 0;  // raw, sender's clock
  std::int64_t recv_ns = 0;  // raw, receiver's clock
  // The receive expressed in the sender's clock: recv − correction. Present only when corrected.
  std::optional<std::int64_t> corrected_recv_ns;
  std::optional<std::int64_t> correction_ns;  // what was subtracted (the estimate of θ, after limits)
  std::optional<std::int64_t> bound_ns;       // ± uncertainty of corrected_recv_ns (the interval half-width)
  bool corrected = false;
  bool clamped = false;  // the midpoint would have made this span negative: limited to the span itself
  bool capped = false;   // limited by max_correction_ns
};

// The cap on corrections exported with spans (/api/v1/spans). The correction is already kept
// inside the pair's offset interval, so the cap only matters when that interval itself sits far
// from zero: a clock more than a second off is a broken clock, not one to paper over per message,
// and a midpoint that large is likelier to come from mispaired or hostile input. Such spans keep
// their raw timestamps, a correction of at most this, and `capped`.
inline constexpr std::int64_t kMaxExportedCorrectionNs = 1'000'000'000;

// Corrects only from a two-sided, non-empty estimate of this directed pair (either orientation
// is accepted). The correction stays inside the offset interval and never exceeds the span itself,
// so a message that was received after it was sent is never turned into an inversion; with
// max_correction_ns > 0 its magnitude is also capped (Jaeger #2053 asked for exactly that).
CorrectedSpan correct_span(const Span& span, const PairEstimate& estimate, std::int64_t max_correction_ns = 0);

}  // namespace skewscope::estimate
