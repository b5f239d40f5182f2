// One view over several agents' statuses (`skewscope status|top --agent URL --agent URL ...`).
// With the exchange, each host pair is correlated by one agent, and during a hand-over by two for a
// while: the merge keeps, per pair, the report that knows most and is freshest.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skewscope {

// What one agent answered: its parsed /api/v1/status, or why there is none.
struct AgentStatus {
  std::string url;
  std::optional<nlohmann::json> status;
  std::string error;  // set when status is empty
};

// True when `candidate` should replace `current` as the merged report of one (src, dst, transport):
// a state other than "unknown" first, then the smaller last_span_age_seconds (missing or null: never
// seen, +inf), then the larger window_spans. A full tie keeps `current` (the earlier --agent).
bool prefer_pair_report(const nlohmann::json& candidate, const nlohmann::json& current);

// The merged status: the /api/v1/status shape (health, window_seconds, pairs, capture) plus
//   pairs[].agent      the URL whose report was kept
//   agents[]           {url, reachable, error, health, pairs} for every agent, in --agent order
//   health_reason      why health is null, or null
// health: 0 when a merged pair is violated; else null when an agent is unreachable or reports an
// unknown health for a reason of its own (capture down, halves lost or unpaired: an agent that only
// has no pair of its own, `no_pair_known`, is no reason in a merged view); else null when no merged
// pair has health 1; else 1.
nlohmann::json merge_statuses(const std::vector<AgentStatus>& agents);

// Exit code of `skewscope status` for one agent's status (or a merged view without unreachable
// agents): 0 only when health is 1 and every pair's health is known; 1 otherwise (a violation, an
// unknown health, or a pair that cannot be vouched for: no span in its window, halves lost or
// unpaired).
int status_exit_code(const nlohmann::json& status);

// Exit code of `skewscope status` for a merged view. A violation seen on any reachable agent is
// certain and wins (1); otherwise an unreachable agent (3); otherwise status_exit_code's rule over
// the merged pairs.
int merged_status_exit_code(const nlohmann::json& merged);

// The lines printed under the pair table in the merged view: one per agent, and the health reason.
std::string render_agents_section(const nlohmann::json& merged);

}  // namespace skewscope
