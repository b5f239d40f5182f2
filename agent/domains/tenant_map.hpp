// Tenants: named groups of domains (--tenant NAME=GLOB,..., or the `tenants:` section of the
// policy file; docs/tenants.md). A tenant's user sees only the pairs whose two ends are in its
// tenant. A domain belongs to at most one tenant: globs of two tenants that could both match one
// name are refused when the map is made, so that no domain is ever shown to two tenants.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope {

// At most this many tenants and globs per tenant: tenant names are metric label values.
inline constexpr std::size_t kMaxTenants = 64;
inline constexpr std::size_t kMaxTenantGlobs = 64;

struct TenantSpec {
  std::string name;
  std::vector<std::string> globs;  // shell patterns (fnmatch) over domain names
  bool operator==(const TenantSpec&) const = default;
};

// NAME=GLOB[,GLOB...], e.g. payments=db-*,ledger
Result<TenantSpec> parse_tenant_flag(std::string_view text);

// Tenant names share the shape of domain names (they are label values and URL parameters).
bool is_valid_tenant_name(std::string_view name);

// Whether some name matches both globs (*, ?, [set], [!set], backslash escapes; fnmatch without
// flags). Exact: the two patterns are run side by side as automata.
bool globs_overlap(std::string_view a, std::string_view b);

class TenantMap {
 public:
  TenantMap() = default;  // no tenants: every domain is operator-only
  // Refuses an empty or invalid name, a name given twice, a tenant without globs, an empty or
  // malformed glob, and two tenants whose globs overlap (the message names both globs).
  static Result<TenantMap> create(std::vector<TenantSpec> specs);

  bool empty() const { return tenants_.empty(); }
  const std::vector<TenantSpec>& tenants() const { return tenants_; }
  const TenantSpec* find(std::string_view name) const;
  // The one tenant whose globs match the domain name; nullopt: operator-only.
  std::optional<std::string> tenant_of(std::string_view domain) const;
  bool contains(std::string_view tenant, std::string_view domain) const;

 private:
  std::vector<TenantSpec> tenants_;
};

}  // namespace skewscope
