#include "policy/policy_tracker.hpp"

namespace skewscope::policy {

void PolicyTracker::set_policies(const PolicySet& set) {
  std::vector<PolicyState> next;
  for (const Policy& p : set.policies) {
    PolicyState state;
    if (const PolicyState* old = find(p.name)) state = *old;
    state.policy = p;
    next.push_back(std::move(state));
  }
  states_ = std::move(next);
}

const PolicyState* PolicyTracker::find(const std::string& name) const {
  for (const auto& s : states_)
    if (s.policy.name == name) return &s;
  return nullptr;
}

std::vector<DegradedEdge> PolicyTracker::evaluate(std::int64_t now_ns, const EvidenceFn& evidence) {
  std::vector<DegradedEdge> edges;
  for (PolicyState& s : states_) {
    s.verdict = decide_policy(s.policy, evidence(s.policy));
    s.evaluated = true;
    if (s.verdict.verdict == Verdict::unknown) {
      if (!s.unknown_since_ns) s.unknown_since_ns = now_ns;
      // A workload that cannot go without evidence for long says so with max_unknown.
      if (s.policy.max_unknown_ns && now_ns - *s.unknown_since_ns > *s.policy.max_unknown_ns) {
        s.verdict.verdict = Verdict::violated;
        s.verdict.reason = VerdictReason::unknown_too_long;
      }
    } else {
      s.unknown_since_ns.reset();
    }
    const bool met = s.verdict.verdict == Verdict::met;
    s.met_in_row = met ? s.met_in_row + 1 : 0;
    s.not_met_in_row = met ? 0 : s.not_met_in_row + 1;
    if (!s.degraded && s.not_met_in_row >= kFireAfter) {
      s.degraded = true;
      s.degraded_since_ns = now_ns;
      ++s.fired_total;
      edges.push_back({s, true});
    } else if (s.degraded && s.met_in_row >= kResolveAfter) {
      s.degraded = false;
      s.degraded_since_ns.reset();
      ++s.resolved_total;
      edges.push_back({s, false});
    }
  }
  return edges;
}

}  // namespace skewscope::policy
