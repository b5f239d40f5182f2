#include "policy/policy_spec.hpp"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "domains/duration.hpp"

namespace skewscope::policy {
namespace {

// A problem at a node, "line N: ..." (yaml-cpp counts lines from 0).
struct Problem {
  int line = 0;
  std::string what;
};
using Checked = Result<bool, Problem>;  // value unused: only whether the node passed

int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

Problem at(const YAML::Node& node, std::string what) { return {line_of(node), std::move(what)}; }

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

Result<std::string, Problem> scalar(const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) return Result<std::string, Problem>::fail(at(node, key + " must be a single value"));
  return Result<std::string, Problem>::ok(node.Scalar());
}

Result<std::vector<std::string>, Problem> scalars(const YAML::Node& node, const std::string& key) {
  using R = Result<std::vector<std::string>, Problem>;
  std::vector<std::string> out;
  if (node.IsScalar()) return R::ok({node.Scalar()});
  if (!node.IsSequence() || node.size() == 0) return R::fail(at(node, key + " must be a value or a non-empty list"));
  for (const auto& item : node) {
    auto value = scalar(item, key);
    if (!value) return R::fail(value.error);
    out.push_back(*value);
  }
  return R::ok(std::move(out));
}

// A duration > 0 ("100us", "1ms", "30s").
Result<std::int64_t, Problem> positive_duration(const YAML::Node& node, const std::string& key) {
  using R = Result<std::int64_t, Problem>;
  auto text = scalar(node, key);
  if (!text) return R::fail(text.error);
  auto ns = parse_duration_ns(*text);
  if (!ns) return R::fail(at(node, key + ": " + ns.error));
  if (*ns <= 0) return R::fail(at(node, key + " must be greater than 0, not " + *text));
  return R::ok(*ns);
}

Result<std::string, Problem> http_url(const YAML::Node& node, const std::string& key) {
  using R = Result<std::string, Problem>;
  auto url = scalar(node, key);
  if (!url) return url;
  const std::string& u = *url;
  auto scheme_end = u.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : u.substr(0, scheme_end);
  if ((scheme != "http" && scheme != "https") || u.size() == scheme_end + 3 || u[scheme_end + 3] == '/')
    return R::fail(at(node, key + " must be an http:// or https:// URL with a host, not '" + u + "'"));
  if (u.find_first_of(" \t\r\n") != std::string::npos) return R::fail(at(node, key + " must not contain spaces"));
  return url;
}

// Every key known, and none twice: YAML parsers keep one of two values silently, and which one
// is not the reader's guess to make.
Checked known_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second) return Checked::fail(at(entry.first, where + key + " is given twice"));
    if (known.count(key)) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    return Checked::fail(at(entry.first, where + key + " is not a known key (known: " + list + ")"));
  }
  return Checked::ok(true);
}

Checked parse_degraded(const YAML::Node& node, DegradedMode& out) {
  if (!node.IsMap()) return Checked::fail(at(node, "degraded must be a map"));
  if (auto k = known_keys(node, {"alertmanager", "webhook", "untrusted_spans"}, "degraded."); !k) return k;
  if (auto n = node["alertmanager"]) {
    auto url = http_url(n, "degraded.alertmanager");
    if (!url) return Checked::fail(url.error);
    out.alertmanager_url = *url;
  }
  if (auto n = node["webhook"]) {
    auto url = http_url(n, "degraded.webhook");
    if (!url) return Checked::fail(url.error);
    out.webhook_url = *url;
  }
  if (auto n = node["untrusted_spans"]) {
    auto text = scalar(n, "degraded.untrusted_spans");
    if (!text) return Checked::fail(text.error);
    if (*text != "true" && *text != "false")
      return Checked::fail(at(n, "degraded.untrusted_spans must be true or false, not " + *text));
    out.untrusted_spans = *text == "true";
  }
  return Checked::ok(true);
}

Result<Policy, Problem> parse_policy(const YAML::Node& node) {
  using R = Result<Policy, Problem>;
  if (!node.IsMap()) return R::fail(at(node, "a policy must be a map (name, precision, domains, ...)"));
  if (auto k = known_keys(
          node, {"name", "tenant", "domains", "transports", "precision", "max_unknown", "min_spans", "degraded"}, "");
      !k)
    return R::fail(k.error);
  Policy p;
  p.line = line_of(node);
  for (const char* required : {"name", "precision", "domains"})
    if (!node[required]) return R::fail(at(node, std::string("the policy has no ") + required));

  auto name = scalar(node["name"], "name");
  if (!name) return R::fail(name.error);
  if (!valid_name(*name))
    return R::fail(at(node["name"], "name '" + *name + "' must be 1-64 letters, digits, '-', '_' or '.'"));
  p.name = *name;
  if (auto n = node["tenant"]) {
    auto tenant = scalar(n, "tenant");
    if (!tenant) return R::fail(tenant.error);
    if (!valid_name(*tenant))
      return R::fail(at(n, "tenant '" + *tenant + "' must be 1-64 letters, digits, '-', '_' or '.'"));
    p.tenant = *tenant;
  }
  auto precision = positive_duration(node["precision"], "precision");
  if (!precision) return R::fail(precision.error);
  p.precision_ns = *precision;

  auto domains = scalars(node["domains"], "domains");
  if (!domains) return R::fail(domains.error);
  for (const auto& glob : *domains)
    if (glob.empty()) return R::fail(at(node["domains"], "domains: an empty name matches nothing"));
  p.domains = *domains;

  if (auto n = node["transports"]) {
    auto names = scalars(n, "transports");
    if (!names) return R::fail(names.error);
    for (const auto& t : *names) {
      auto transport = parse_transport(t);
      if (!transport) return R::fail(at(n, "transports: " + transport.error));
      p.transports.push_back(*transport);
    }
  }
  if (auto n = node["max_unknown"]) {
    auto limit = positive_duration(n, "max_unknown");
    if (!limit) return R::fail(limit.error);
    p.max_unknown_ns = *limit;
  }
  if (auto n = node["min_spans"]) {
    auto text = scalar(n, "min_spans");
    if (!text) return R::fail(text.error);
    std::uint64_t value = 0;
    bool digits = !text->empty() && text->size() <= 9;
    for (char c : *text) digits = digits && c >= '0' && c <= '9';
    if (digits) value = std::stoull(*text);
    if (!digits || value == 0)
      return R::fail(at(n, "min_spans must be a whole number from 1 to 999999999, not " + *text));
    p.min_spans = value;
  }
  if (auto n = node["degraded"]) {
    if (auto d = parse_degraded(n, p.degraded); !d) return R::fail(d.error);
  }
  return R::ok(std::move(p));
}

// tenants: {NAME: [DOMAIN_GLOB, ...], ...}, validated as --tenant is (no overlap, valid names).
Result<TenantMap, Problem> parse_tenants(const YAML::Node& node) {
  using R = Result<TenantMap, Problem>;
  if (!node.IsMap() || node.size() == 0)
    return R::fail(at(node, "tenants must be a map of tenant names to domain globs"));
  std::vector<TenantSpec> specs;
  for (const auto& entry : node) {
    auto name = scalar(entry.first, "a tenant name");
    if (!name) return R::fail(name.error);
    auto globs = scalars(entry.second, "tenant " + *name);
    if (!globs) return R::fail(globs.error);
    specs.push_back({*name, *globs});
  }
  auto map = TenantMap::create(std::move(specs));
  if (!map) return R::fail(at(node, "tenants: " + map.error));
  return R::ok(std::move(*map.value));
}

Result<PolicySet, Problem> parse_root(const YAML::Node& root) {
  using R = Result<PolicySet, Problem>;
  if (!root.IsMap()) return R::fail(at(root, "the top level must be a map with the key policies"));
  if (auto k = known_keys(root, {"policies", "tenants"}, ""); !k) return R::fail(k.error);
  const YAML::Node list = root["policies"];
  if (!list) return R::fail(at(root, "no policies key"));
  if (!list.IsSequence() || list.size() == 0) return R::fail(at(list, "policies must be a non-empty list"));
  if (list.size() > kMaxPolicies)
    return R::fail(
        at(list, "at most " + std::to_string(kMaxPolicies) + " policies, not " + std::to_string(list.size())));
  PolicySet set;
  if (const YAML::Node tenants = root["tenants"]) {
    auto parsed = parse_tenants(tenants);
    if (!parsed) return R::fail(parsed.error);
    set.tenants = std::move(*parsed.value);
  }
  std::set<std::string> names;
  for (const auto& item : list) {
    auto policy = parse_policy(item);
    if (!policy) return R::fail(policy.error);
    if (!names.insert(policy->name).second)
      return R::fail(at(item["name"], "policy name '" + policy->name + "' is used twice"));
    set.policies.push_back(std::move(*policy));
  }
  return R::ok(std::move(set));
}

}  // namespace

bool Policy::covers(std::string_view src, std::string_view dst, Transport transport) const {
  if (!transports.empty() && std::find(transports.begin(), transports.end(), transport) == transports.end())
    return false;
  auto matches = [](const std::vector<std::string>& globs, std::string_view domain) {
    const std::string name(domain);
    for (const auto& glob : globs)
      if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
    return false;
  };
  if (!tenant_globs.empty() && !(matches(tenant_globs, src) && matches(tenant_globs, dst))) return false;
  return matches(domains, src) && matches(domains, dst);
}

Status bind_policy_tenants(PolicySet& set, const TenantMap& tenants) {
  for (auto& p : set.policies) {
    p.tenant_globs.clear();
    if (p.tenant.empty() || tenants.empty()) continue;
    const TenantSpec* spec = tenants.find(p.tenant);
    if (spec == nullptr)
      return Status::fail("line " + std::to_string(p.line) + ": policy '" + p.name + "' names tenant '" + p.tenant +
                          "', which is not declared");
    p.tenant_globs = spec->globs;
  }
  return Status::ok();
}

const Policy* PolicySet::find(std::string_view name) const {
  for (const auto& p : policies)
    if (p.name == name) return &p;
  return nullptr;
}

Result<Transport> parse_transport(std::string_view name) {
  for (Transport t : {Transport::tcp, Transport::kafka, Transport::zmq, Transport::rdma, Transport::zmtp})
    if (name == transport_name(t)) return Result<Transport>::ok(t);
  return Result<Transport>::fail("unknown transport '" + std::string(name) + "' (tcp, kafka, zmq, rdma, zmtp)");
}

Result<PolicySet> parse_policies(std::string_view yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    return Result<PolicySet>::fail("line " + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    return Result<PolicySet>::fail(std::string("not YAML: ") + e.what());
  }
  if (!root || root.IsNull()) return Result<PolicySet>::fail("line 1: the file is empty (it needs policies:)");
  try {
    auto parsed = parse_root(root);
    if (!parsed) return Result<PolicySet>::fail("line " + std::to_string(parsed.error.line) + ": " + parsed.error.what);
    // The file's own tenants bind its policies here, so that `policy check` refuses a policy
    // naming an undeclared tenant; tenants from --tenant are bound by the agent (policy_runtime).
    if (!parsed->tenants.empty())
      if (Status bound = bind_policy_tenants(*parsed.value, parsed->tenants); !bound)
        return Result<PolicySet>::fail(bound.error);
    return Result<PolicySet>::ok(std::move(*parsed));
  } catch (const YAML::Exception& e) {
    return Result<PolicySet>::fail("line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace skewscope::policy
