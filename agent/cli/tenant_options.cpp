#include "cli/tenant_options.hpp"

namespace skewscope {

Result<TenantMap> plan_tenants(const std::vector<std::string>& flags) {
  std::vector<TenantSpec> specs;
  for (const auto& flag : flags) {
    auto spec = parse_tenant_flag(flag);
    if (!spec) return Result<TenantMap>::fail("--tenant " + spec.error);
    specs.push_back(std::move(*spec.value));
  }
  auto map = TenantMap::create(std::move(specs));
  if (!map) return Result<TenantMap>::fail("--tenant: " + map.error);
  return map;
}

}  // namespace skewscope
