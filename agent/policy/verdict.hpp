// The verdict of a policy on one pair of domains, from the evidence the earlier stages hold for
// it, and the policy's verdict over every pair it covers (docs/policies.md, "Verdicts").
//
// θ is the offset between the pair's clocks (dst minus src). The estimate's interval [lower,
// upper] holds θ; a workload that orders events by raw timestamps is off by |θ|, so the bound
// that must stay within the precision is the largest |θ| the interval admits (|midpoint| +
// half-width), plus the two hosts' declared clock error bounds where both are known.
//  - violated: an inversion (negative span) in the window, or the interval lies wholly beyond
//    ±precision (lower > precision or upper < −precision): the need is proven unmet;
//  - unknown: evidence missing — capture down, halves lost in the window, no or too few spans, a
//    local domain below the pairing floor, a one-sided interval, or a bound wider than the
//    precision that proves nothing either way;
//  - met: none of the above and the bound is within the precision. An empty window is never met.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy_spec.hpp"

namespace skewscope::policy {

enum class Verdict { met, violated, unknown };
const char* verdict_name(Verdict v);

// Why a verdict is what it is; the status JSON's `reason`.
enum class VerdictReason {
  within_precision,  // met
  inversion,         // violated: a negative span in the window
  beyond_precision,  // violated: the interval excludes every offset within ±precision
  unknown_too_long,  // violated: unknown for longer than max_unknown
  capture_down,      // unknown ...
  halves_lost,
  no_spans,
  too_few_spans,
  halves_unpaired,
  window_filling,
  one_sided,
  bound_too_wide,
  no_pairs,  // the policy covers no pair with traffic
};
const char* verdict_reason_name(VerdictReason r);

// What the earlier stages know of one unordered pair (both directions, one transport) over the
// window. Offsets are θ = clock(dst) − clock(src).
struct PairEvidence {
  std::string src, dst;  // domain names, src < dst as the estimate orients them
  Transport transport = Transport::tcp;
  std::uint64_t spans = 0;           // both directions, in the window
  std::uint64_t negative_spans = 0;  // both directions, in the window
  bool capture_up = true;
  std::uint64_t window_lost_halves = 0;
  bool unpaired = false;        // a local domain of the pair is below the pairing floor
  bool window_filling = false;  // the pair has just moved to this agent (exchange hand-over)
  std::optional<double> lower_ns, upper_ns;
  std::optional<std::int64_t> clock_bound_ns;  // sum of both hosts' declared error bounds, both known
};

struct PairVerdict {
  PairEvidence evidence;
  Verdict verdict = Verdict::unknown;
  VerdictReason reason = VerdictReason::no_spans;
  std::optional<double> bound_ns;  // largest |θ| the evidence admits, when two-sided
};

PairVerdict decide_pair(const Policy& policy, const PairEvidence& evidence);

// The policy over its pairs: violated if any pair is, else unknown if any pair is or there is
// none, else met. The reason is the first pair's with that verdict (no_pairs without pairs).
struct PolicyVerdict {
  Verdict verdict = Verdict::unknown;
  VerdictReason reason = VerdictReason::no_pairs;
  std::vector<PairVerdict> pairs;
};

PolicyVerdict decide_policy(const Policy& policy, const std::vector<PairEvidence>& covered);

}  // namespace skewscope::policy
