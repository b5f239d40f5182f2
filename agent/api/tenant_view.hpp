// One tenant's view of the agent (docs/tenants.md): who may see which tenant, and the status JSON
// and /metrics cut down to that tenant's pairs and domains.
//
// Both cuts are allow-lists: a field or a sample is kept only when it is known to belong to the
// tenant (a pair whose two ends are its domains, a domain of its own, a policy of its own). What
// the agent counts for all its domains together (capture losses, the exchange, the HTTP server)
// cannot be split by tenant, so it is left out rather than shown: a tenant never sees a number
// that another tenant's traffic moves.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domains/tenant_map.hpp"

namespace skewscope {

// The tenants and, with basic auth, the users bound to some of them (--tenant-user). A user of
// the web config that is bound to no tenant is an operator: it sees everything.
struct TenantAccess {
  TenantMap tenants;
  std::map<std::string, std::vector<std::string>> user_tenants;
  bool is_operator(const std::string& user) const { return user_tenants.find(user) == user_tenants.end(); }
};

// USER=TENANT[,TENANT...]; the tenants must be declared and the user must be one of web_users
// (the basic-auth users of --web.config.file), so that a misspelt user never becomes an operator.
Status bind_tenant_user(TenantAccess& access, const std::string& text, const std::vector<std::string>& web_users);

// The tenants and each --tenant-user binding, checked once the web config's basic-auth users
// (web_users) are known: bindings need basic auth, since without it every client is an operator.
Result<TenantAccess> plan_tenant_access(TenantMap tenants, const std::vector<std::string>& bindings,
                                        const std::vector<std::string>& web_users);

// The view a request gets: all (tenant nullopt) or one tenant's, or the refusal to answer.
struct ScopeDecision {
  int status = 200;  // 200: answer with this scope; else refuse with status and error
  std::string error;
  std::optional<std::string> tenant;
};

// user: the basic-auth user (nullptr without auth: everyone is an operator). requested: the
// ?tenant= parameter (nullptr when absent). A tenant's user asking for a tenant that is not its
// own is refused with 403 whether that tenant exists or not, so the answer tells nothing of it.
ScopeDecision decide_scope(const TenantAccess& access, const std::string* user, const std::string* requested);

// GET /api/v1/status?tenant=NAME: the contract's status restricted to the tenant.
nlohmann::json tenant_status_json(const nlohmann::json& status, const TenantMap& tenants, const std::string& tenant);

// /metrics for one tenant: the samples whose src, dst, domain and host labels are all the tenant's
// domains and whose tenant label (if any) is the tenant; a sample with none of these labels is
// agent-wide and left out. Families left without samples are left out with their HELP and TYPE.
std::string tenant_metrics_text(const std::string& text, const TenantMap& tenants, const std::string& tenant);

// GET /api/v1/policies for one tenant: its policies only, without the file's path and errors.
nlohmann::json tenant_policies_json(const nlohmann::json& policies, const std::string& tenant);

}  // namespace skewscope
