// --tenant (docs/tenants.md), checked before anything is bound: every problem is a usage error
// (exit 2) that names the flag. --tenant-user is checked by the run once --web.config.file is
// read (api/tenant_view.hpp, plan_tenant_access).
#pragma once

#include <string>
#include <vector>

#include "api/tenant_view.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// Every --tenant NAME=DOMAIN_GLOB,... into one map, validated whole (names, globs, no overlap).
Result<TenantMap> plan_tenants(const std::vector<std::string>& flags);

}  // namespace skewscope
