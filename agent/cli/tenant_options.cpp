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

}  // namespace skewscope
