// --tenant and --tenant-user (docs/tenants.md), checked before anything is bound: every problem
// is a usage error (exit 2) that names the flag.
#pragma once

#include <string>
#include <vector>

#include "api/tenant_view.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// Every --tenant NAME=DOMAIN_GLOB,... into one map, validated whole (names, globs, no overlap).
Result<TenantMap> plan_tenants(const std::vector<std::string>& flags);

// The tenants and each --tenant-user binding; web_users are the basic-auth users of
// --web.config.file (bindings need basic auth: without it every client is an operator).
Result<TenantAccess> plan_tenant_access(TenantMap tenants, const std::vector<std::string>& bindings,
                                        const std::vector<std::string>& web_users);

}  // namespace skewscope
