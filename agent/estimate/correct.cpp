#include "estimate/correct.hpp"

#include <algorithm>
#include <cmath>

#include "skewscope/saturating.hpp"

namespace skewscope::estimate {

CorrectedSpan correct_span(const Span& span, const PairEstimate& estimate, std::int64_t max_correction_ns) {
  CorrectedSpan out;
  out.send_ns = span.send_ns;
  out.recv_ns = span.recv_ns;
  const bool same = estimate.src == span.src && estimate.dst == span.dst;
  const bool swapped = estimate.src == span.dst && estimate.dst == span.src;
  if (!same && !swapped) return out;
  const PairEstimate e = same ? estimate : reversed(estimate);
  if (!e.offset_ns || !e.bound_ns || !e.lower_ns || !e.upper_ns || e.empty_interval) return out;

  double c = std::clamp(*e.offset_ns, *e.lower_ns, *e.upper_ns);
  const double s = static_cast<double>(span.span_ns());
  if (c > s && s >= 0) {  // keep a causally ordered message ordered
    c = s;
    out.clamped = true;
  }
  if (max_correction_ns > 0 && std::fabs(c) > static_cast<double>(max_correction_ns)) {
    c = std::copysign(static_cast<double>(max_correction_ns), c);
    out.capped = true;
  }
  const std::int64_t ci = sat_round(c);
  out.correction_ns = ci;
  out.corrected_recv_ns = sat_sub(span.recv_ns, ci);
  out.bound_ns = sat_round(std::ceil(*e.bound_ns));
  out.corrected = true;
  return out;
}

}  // namespace skewscope::estimate
