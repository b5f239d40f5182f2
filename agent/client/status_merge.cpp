#include "client/status_merge.hpp"

#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

namespace skewscope {
namespace {

using nlohmann::json;

// Agents are other programs, possibly of another version: every field is read defensively.
const json* field(const json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

std::string text_field(const json& object, const char* name) {
  const json* v = field(object, name);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

double number_field(const json& object, const char* name, double missing) {
  const json* v = field(object, name);
  return v && v->is_number() ? v->get<double>() : missing;
}

bool known(const json& pair) {
  std::string state = text_field(pair, "state");
  return !state.empty() && state != "unknown";
}

bool violated(const json& pair) {
  const json* health = field(pair, "health");
  return text_field(pair, "state") == "violated" || (health && health->is_number() && *health == 0);
}

using MergedPairKey = std::tuple<std::string, std::string, std::string>;  // src, dst, transport

struct Kept {
  json report;
  std::size_t agent;
};

}  // namespace

bool prefer_pair_report(const json& candidate, const json& current) {
  if (known(candidate) != known(current)) return known(candidate);
  constexpr double never = std::numeric_limits<double>::infinity();
  double candidate_age = number_field(candidate, "last_span_age_seconds", never);
  double current_age = number_field(current, "last_span_age_seconds", never);
  if (candidate_age != current_age) return candidate_age < current_age;
  return number_field(candidate, "window_spans", 0) > number_field(current, "window_spans", 0);
}

json merge_statuses(const std::vector<AgentStatus>& agents) {
  std::map<MergedPairKey, Kept> kept;
  json agent_list = json::array();
  json capture = json::object();
  json window;  // null until an agent reports one; null again if agents disagree
  bool window_seen = false;
  std::string unknown_reason;
  auto add_reason = [&](const std::string& why) { unknown_reason += (unknown_reason.empty() ? "" : "; ") + why; };
  if (agents.empty()) add_reason("no agent");

  for (std::size_t i = 0; i < agents.size(); ++i) {
    const AgentStatus& agent = agents[i];
    json entry = {{"url", agent.url}, {"reachable", agent.status.has_value()},
                  {"error", nullptr}, {"health", nullptr},
                  {"pairs", 0},       {"reported_pairs", 0}};
    if (!agent.status) {
      entry["error"] = agent.error;
      add_reason("agent " + agent.url + " unreachable");
      agent_list.push_back(entry);
      continue;
    }
    const json& status = *agent.status;
    const json* health = field(status, "health");
    if (health && health->is_number()) {
      entry["health"] = *health;
    } else if (text_field(status, "unknown_reason") != "no_pair_known") {
      // Older agents give no reason: their null counts. An agent whose only reason is that it has
      // no pair of its own (the exchange put its pairs elsewhere) hides nothing.
      const std::string why = text_field(status, "health_reason");
      add_reason("agent " + agent.url + " reports unknown health" + (why.empty() ? "" : " (" + why + ")"));
    }
    if (const json* exchange = field(status, "exchange")) entry["exchange"] = *exchange;

    if (const json* w = field(status, "window_seconds")) {
      if (!window_seen)
        window = *w;
      else if (window != *w)
        window = nullptr;
      window_seen = true;
    }
    if (const json* c = field(status, "capture"); c && c->is_object()) {
      for (const auto& [name, value] : c->items()) {
        // Counters add up across agents; ratios and other non-counters do not, and are left out.
        if (!value.is_number_integer() || value < 0) continue;
        capture[name] = capture.value(name, std::uint64_t{0}) + value.get<std::uint64_t>();
      }
    }
    std::size_t reported = 0;
    if (const json* pairs = field(status, "pairs"); pairs && pairs->is_array()) {
      for (const json& pair : *pairs) {
        MergedPairKey key{text_field(pair, "src"), text_field(pair, "dst"), text_field(pair, "transport")};
        // Without its names a pair cannot be matched with another agent's report, nor shown.
        if (std::get<0>(key).empty() || std::get<1>(key).empty() || std::get<2>(key).empty()) continue;
        ++reported;
        auto it = kept.find(key);
        if (it == kept.end())
          kept.emplace(key, Kept{pair, i});
        else if (prefer_pair_report(pair, it->second.report))
          it->second = Kept{pair, i};
      }
    }
    entry["reported_pairs"] = reported;
    agent_list.push_back(entry);
  }

  json pairs = json::array();
  bool any_violated = false, any_healthy = false;
  for (auto& [key, k] : kept) {
    any_violated = any_violated || violated(k.report);
    const json* pair_health = field(k.report, "health");
    any_healthy = any_healthy || (pair_health && pair_health->is_number() && *pair_health == 1);
    json pair = k.report;
    pair["agent"] = agents[k.agent].url;
    agent_list[k.agent]["pairs"] = agent_list[k.agent]["pairs"].get<std::size_t>() + 1;
    pairs.push_back(std::move(pair));
  }
  if (unknown_reason.empty() && !any_healthy) add_reason("no pair has a span (or a known health) in the window");
  json health = any_violated ? json(0) : unknown_reason.empty() ? json(1) : json(nullptr);
  return {{"health", health},         {"health_reason", health.is_null() ? json(unknown_reason) : json(nullptr)},
          {"window_seconds", window}, {"pairs", pairs},
          {"capture", capture},       {"agents", agent_list}};
}

int merged_status_exit_code(const json& merged) {
  const json* health = field(merged, "health");
  if (health && health->is_number() && *health == 0) return 1;
  if (const json* agents = field(merged, "agents"); agents && agents->is_array()) {
    for (const json& agent : *agents) {
      const json* reachable = field(agent, "reachable");
      if (!reachable || *reachable != true) return 3;
    }
  }
  return status_exit_code(merged);
}

int status_exit_code(const json& status) {
  const json* health = field(status, "health");
  if (!(health && health->is_number() && *health == 1)) return 1;
  if (const json* pairs = field(status, "pairs"); pairs && pairs->is_array()) {
    for (const json& pair : *pairs) {
      const json* pair_health = field(pair, "health");
      if (!(pair_health && pair_health->is_number() && *pair_health == 1)) return 1;
    }
  }
  return 0;
}

std::string render_agents_section(const json& merged) {
  const json* agents = field(merged, "agents");
  if (!agents || !agents->is_array()) return {};
  std::size_t reachable = 0;
  for (const json& agent : *agents) reachable += field(agent, "reachable") && *field(agent, "reachable") == true;
  std::string out =
      "\nagents (" + std::to_string(reachable) + " of " + std::to_string(agents->size()) + " reachable):\n";
  char line[512];
  for (const json& agent : *agents) {
    std::string url = text_field(agent, "url");
    if (!(field(agent, "reachable") && *field(agent, "reachable") == true)) {
      std::snprintf(line, sizeof line, "  %-28s unreachable: %s\n", url.c_str(), text_field(agent, "error").c_str());
    } else {
      const json* health = field(agent, "health");
      std::string health_text = health && health->is_number() ? health->dump() : "?";
      std::string exchange;  // with the exchange: what this agent owns of the topic
      if (const json* x = field(agent, "exchange"); x && x->is_object()) {
        const json* connected = field(*x, "connected");
        const json* partitions = field(*x, "partitions");
        exchange = std::string("   exchange ") + (connected && *connected == true ? "connected" : "disconnected") +
                   ", partitions " + (partitions ? partitions->dump() : "?");
      }
      std::snprintf(line, sizeof line, "  %-28s health %-2s pairs shown %g of %g reported%s\n", url.c_str(),
                    health_text.c_str(), number_field(agent, "pairs", 0), number_field(agent, "reported_pairs", 0),
                    exchange.c_str());
    }
    out += line;
  }
  std::string reason = text_field(merged, "health_reason");
  if (!reason.empty()) out += "causality_health unknown: " + reason + "\n";
  return out;
}

}  // namespace skewscope
