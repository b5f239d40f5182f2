#include "policy/verdict.hpp"

#include <algorithm>
#include <cmath>

namespace skewscope::policy {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::met: return "met";
    case Verdict::violated: return "violated";
    case Verdict::unknown: return "unknown";
  }
  return "unknown";
}

const char* verdict_reason_name(VerdictReason r) {
  switch (r) {
    case VerdictReason::within_precision: return "within_precision";
    case VerdictReason::inversion: return "inversion";
    case VerdictReason::beyond_precision: return "beyond_precision";
    case VerdictReason::unknown_too_long: return "unknown_too_long";
    case VerdictReason::capture_down: return "capture_down";
    case VerdictReason::halves_lost: return "halves_lost";
    case VerdictReason::no_spans: return "no_spans";
    case VerdictReason::too_few_spans: return "too_few_spans";
    case VerdictReason::halves_unpaired: return "halves_unpaired";
    case VerdictReason::window_filling: return "window_filling";
    case VerdictReason::one_sided: return "one_sided";
    case VerdictReason::bound_too_wide: return "bound_too_wide";
    case VerdictReason::no_pairs: return "no_pairs";
  }
  return "unknown";
}

PairVerdict decide_pair(const Policy& policy, const PairEvidence& e) {
  PairVerdict out{e, Verdict::unknown, VerdictReason::no_spans, std::nullopt};
  const auto precision = static_cast<double>(policy.precision_ns);
  if (e.lower_ns && e.upper_ns) {
    out.bound_ns =
        std::max(std::abs(*e.lower_ns), std::abs(*e.upper_ns)) + static_cast<double>(e.clock_bound_ns.value_or(0));
  }
  auto decide = [&out](Verdict v, VerdictReason r) {
    out.verdict = v;
    out.reason = r;
    return out;
  };
  // What was seen is certain, whatever was lost: an inversion, or an interval (which holds θ
  // however many spans built it) that excludes every offset the workload could live with.
  if (e.negative_spans > 0) return decide(Verdict::violated, VerdictReason::inversion);
  if ((e.lower_ns && *e.lower_ns > precision) || (e.upper_ns && *e.upper_ns < -precision))
    return decide(Verdict::violated, VerdictReason::beyond_precision);
  // A claim that the need is met needs complete evidence.
  if (!e.capture_up) return decide(Verdict::unknown, VerdictReason::capture_down);
  if (e.window_lost_halves > 0) return decide(Verdict::unknown, VerdictReason::halves_lost);
  if (e.spans == 0) return decide(Verdict::unknown, VerdictReason::no_spans);
  if (e.spans < policy.min_spans) return decide(Verdict::unknown, VerdictReason::too_few_spans);
  if (e.unpaired) return decide(Verdict::unknown, VerdictReason::halves_unpaired);
  if (e.window_filling) return decide(Verdict::unknown, VerdictReason::window_filling);
  if (!out.bound_ns) return decide(Verdict::unknown, VerdictReason::one_sided);
  if (*out.bound_ns > precision) return decide(Verdict::unknown, VerdictReason::bound_too_wide);
  return decide(Verdict::met, VerdictReason::within_precision);
}

PolicyVerdict decide_policy(const Policy& policy, const std::vector<PairEvidence>& covered) {
  PolicyVerdict out;
  for (const auto& e : covered) out.pairs.push_back(decide_pair(policy, e));
  if (out.pairs.empty()) return out;  // unknown, no_pairs: nothing covered is never met
  auto first = [&out](Verdict v) {
    return std::find_if(out.pairs.begin(), out.pairs.end(), [v](const PairVerdict& p) { return p.verdict == v; });
  };
  for (Verdict v : {Verdict::violated, Verdict::unknown}) {
    if (auto it = first(v); it != out.pairs.end()) {
      out.verdict = v;
      out.reason = it->reason;
      return out;
    }
  }
  out.verdict = Verdict::met;
  out.reason = VerdictReason::within_precision;
  return out;
}

}  // namespace skewscope::policy
