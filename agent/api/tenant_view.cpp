#include "api/tenant_view.hpp"

#include <algorithm>
#include <sstream>

namespace skewscope {
namespace {

using nlohmann::json;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) parts.push_back(part);
  if (!text.empty() && text.back() == ',') parts.emplace_back();
  return parts;
}

// The labels of one sample line, `name{a="x",b="y"} 1`, unescaped; nullopt for a line that is not
// a sample with labels (a sample without labels is agent-wide).
std::optional<std::map<std::string, std::string>> sample_labels(const std::string& line) {
  const auto open = line.find('{');
  if (open == std::string::npos || line.empty() || line[0] == '#') return std::nullopt;
  std::map<std::string, std::string> labels;
  std::size_t i = open + 1;
  while (i < line.size() && line[i] != '}') {
    const auto eq = line.find("=\"", i);
    if (eq == std::string::npos) return std::nullopt;
    std::string key = line.substr(i, eq - i), value;
    for (i = eq + 2; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;
        value += line[i] == 'n' ? '\n' : line[i];
      } else {
        value += line[i];
      }
    }
    if (i >= line.size()) return std::nullopt;
    labels[key] = value;
    ++i;  // the closing quote
    if (i < line.size() && line[i] == ',') ++i;
  }
  return labels;
}

// Families triangulated over every pair of the agent, other tenants' too: the operator's, as the
// diagnosis is in the status.
bool triangulated_family(const std::string& line) {
  const std::string name = line.substr(0, line.find('{'));
  return name == "skewscope_diagnosis" || name == "skewscope_host_suspect";
}

bool sample_in_tenant(const std::string& line, const TenantMap& tenants, const std::string& tenant) {
  if (triangulated_family(line)) return false;
  auto labels = sample_labels(line);
  if (!labels) return false;
  bool scoped = false;
  for (const char* key : {"src", "dst", "domain", "host"}) {
    auto it = labels->find(key);
    if (it == labels->end()) continue;
    if (!tenants.contains(tenant, it->second)) return false;
    scoped = true;
  }
  if (auto it = labels->find("tenant"); it != labels->end()) {
    if (it->second != tenant) return false;
    scoped = true;
  }
  return scoped;
}

// A tenant's overall health from its own pairs, by the rule of the agent's: 0 when one pair saw
// a violation, 1 when every pair is healthy, else unknown (null) with the first pair's reason.
void set_tenant_health(json& out, const json& pairs) {
  out["health"] = nullptr;
  out["unknown_reason"] = "no_pairs";
  if (pairs.empty()) return;
  bool all_healthy = true;
  for (const auto& p : pairs) {
    if (p["health"].is_number() && p["health"].get<int>() == 0) {
      out["health"] = 0;
      out["unknown_reason"] = nullptr;
      return;
    }
    if (!p["health"].is_number() && all_healthy) {
      all_healthy = false;
      out["unknown_reason"] = p["unknown_reason"];
    }
  }
  if (all_healthy) {
    out["health"] = 1;
    out["unknown_reason"] = nullptr;
  }
}

json only_tenant_keys(const json& object, const TenantMap& tenants, const std::string& tenant) {
  json kept = json::object();
  if (!object.is_object()) return kept;
  for (const auto& [name, value] : object.items())
    if (tenants.contains(tenant, name)) kept[name] = value;
  return kept;
}

}  // namespace

Status bind_tenant_user(TenantAccess& access, const std::string& text, const std::vector<std::string>& web_users) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return Status::fail("'" + text + "' is not USER=TENANT[,TENANT...]");
  const std::string user = text.substr(0, eq);
  if (std::find(web_users.begin(), web_users.end(), user) == web_users.end())
    return Status::fail("user '" + user + "' is not a basic-auth user of --web.config.file");
  if (access.user_tenants.count(user)) return Status::fail("user '" + user + "' is bound twice");
  std::vector<std::string> bound;
  for (const auto& tenant : split_commas(text.substr(eq + 1))) {
    if (tenant.empty()) return Status::fail("'" + text + "' has an empty tenant name");
    if (access.tenants.find(tenant) == nullptr)
      return Status::fail("'" + text + "': no tenant named '" + tenant + "' (declare it with --tenant)");
    bound.push_back(tenant);
  }
  access.user_tenants[user] = std::move(bound);
  return Status::ok();
}

Result<TenantAccess> plan_tenant_access(TenantMap tenants, const std::vector<std::string>& bindings,
                                        const std::vector<std::string>& web_users) {
  using R = Result<TenantAccess>;
  TenantAccess access{std::move(tenants), {}};
  if (!bindings.empty() && web_users.empty())
    return R::fail(
        "--tenant-user needs basic_auth_users in --web.config.file: without them every client is an "
        "operator");
  for (const auto& binding : bindings)
    if (Status bound = bind_tenant_user(access, binding, web_users); !bound)
      return R::fail("--tenant-user " + bound.error);
  return R::ok(std::move(access));
}

ScopeDecision decide_scope(const TenantAccess& access, const std::string* user, const std::string* requested) {
  const bool tenant_user = user != nullptr && !access.is_operator(*user);
  if (!tenant_user) {
    if (requested == nullptr) return {};
    if (access.tenants.find(*requested) == nullptr)
      return {404,
              access.tenants.empty() ? "no tenants: start the agent with --tenant NAME=DOMAIN_GLOB,..."
                                     : "no tenant named '" + *requested + "'",
              std::nullopt};
    return {200, {}, *requested};
  }
  const auto& mine = access.user_tenants.at(*user);
  if (requested != nullptr) {
    if (std::find(mine.begin(), mine.end(), *requested) == mine.end())
      return {403, "user '" + *user + "' may not see tenant '" + *requested + "'", std::nullopt};
    return {200, {}, *requested};
  }
  if (mine.size() == 1) return {200, {}, mine.front()};
  std::string list;
  for (const auto& t : mine) list += (list.empty() ? "" : ", ") + t;
  return {400, "user '" + *user + "' sees several tenants: name one with ?tenant= (" + list + ")", std::nullopt};
}

json tenant_status_json(const json& status, const TenantMap& tenants, const std::string& tenant) {
  json pairs = json::array();
  for (const auto& p : status.value("pairs", json::array())) {
    if (!tenants.contains(tenant, p.value("src", "")) || !tenants.contains(tenant, p.value("dst", ""))) continue;
    json kept = p;
    // Counted over every pair of the agent (losses are not attributable to a pair): left out.
    kept.erase("window_lost_halves");
    // Triangulated across every pair of the agent, other tenants' too: operator-only.
    kept.erase("diagnosis");
    pairs.push_back(std::move(kept));
  }
  json out = {{"tenant", tenant}, {"window_seconds", status.value("window_seconds", json(nullptr))}, {"pairs", pairs}};
  set_tenant_health(out, pairs);
  const json& capture = status.value("capture", json::object());
  json pairing = capture.value("window_pairing", json::object());
  out["capture"] = {
      {"up", capture.value("up", json(nullptr))},
      {"lost_by_domain", only_tenant_keys(capture.value("lost_by_domain", json::object()), tenants, tenant)},
      {"window_pairing",
       {{"floor", pairing.value("floor", json(nullptr))},
        {"min_halves", pairing.value("min_halves", json(nullptr))},
        {"domains", only_tenant_keys(pairing.value("domains", json::object()), tenants, tenant)}}}};
  const json& clocks = status.value("clocks", json::object());
  out["clocks"] = {{"domains", only_tenant_keys(clocks.value("domains", json::object()), tenants, tenant)}};
  return out;
}

std::string tenant_metrics_text(const std::string& text, const TenantMap& tenants, const std::string& tenant) {
  // HELP and TYPE lines are held until their family's first kept sample.
  std::string out, header;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      header = line + "\n";
    } else if (line.rfind("# TYPE ", 0) == 0) {
      header += line + "\n";
    } else if (sample_in_tenant(line, tenants, tenant)) {
      out += header + line + "\n";
      header.clear();
    }
  }
  return out;
}

json tenant_policies_json(const json& policies, const std::string& tenant) {
  json kept = json::array();
  for (const auto& p : policies.value("policies", json::array())) {
    if (p.value("tenant", "") != tenant) continue;
    json policy = p;
    // Counted over every pair of the agent, as in the status: left out.
    for (auto& pair : policy["pairs"]) pair.erase("window_lost_halves");
    kept.push_back(std::move(policy));
  }
  return {{"tenant", tenant}, {"policies", kept}};
}

}  // namespace skewscope
