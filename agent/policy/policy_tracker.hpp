// Verdicts over time: how long each policy has been unknown (max_unknown), and whether it is in
// its degraded mode. Entering and leaving degraded mode are edge-triggered with hysteresis, so
// one noisy window neither fires nor resolves an alert: it takes kFireAfter evaluations in a row
// that are not met to fire, and kResolveAfter met ones to resolve. Pure: time is passed in.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy_spec.hpp"
#include "policy/verdict.hpp"

namespace skewscope::policy {

constexpr int kFireAfter = 3;
constexpr int kResolveAfter = 3;

struct PolicyState {
  Policy policy;
  PolicyVerdict verdict;  // this evaluation's, max_unknown applied
  bool evaluated = false;
  std::optional<std::int64_t> unknown_since_ns;  // CLOCK_MONOTONIC of the first unknown in a row
  bool degraded = false;                         // firing: the degraded mode is on
  std::optional<std::int64_t> degraded_since_ns;
  int not_met_in_row = 0;
  int met_in_row = 0;
  std::uint64_t fired_total = 0;
  std::uint64_t resolved_total = 0;
};

// One edge of the degraded mode, for the webhooks.
struct DegradedEdge {
  PolicyState state;    // after the edge
  bool firing = false;  // true: entered degraded mode; false: resolved
};

class PolicyTracker {
 public:
  // Replaces the policies; a policy whose name is kept keeps its history (a reload that only
  // changes its precision does not resolve and refire its alert).
  void set_policies(const PolicySet& set);

  using EvidenceFn = std::function<std::vector<PairEvidence>(const Policy&)>;
  std::vector<DegradedEdge> evaluate(std::int64_t now_ns, const EvidenceFn& evidence);

  const std::vector<PolicyState>& states() const { return states_; }
  const PolicyState* find(const std::string& name) const;

 private:
  std::vector<PolicyState> states_;
};

}  // namespace skewscope::policy
