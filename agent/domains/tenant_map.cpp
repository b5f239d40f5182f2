#include "domains/tenant_map.hpp"

#include <fnmatch.h>

#include <bitset>
#include <set>
#include <utility>

#include "domains/domain_spec.hpp"

namespace skewscope {
namespace {

// One position of a glob: the bytes it accepts, and whether it repeats (a `*`).
struct GlobStep {
  std::bitset<256> accepts;
  bool star = false;
};

// The glob as steps, or nullopt when a bracket is not closed or a backslash ends it (fnmatch
// would read those literally; refusing them keeps an operator's typo from meaning something else).
std::optional<std::vector<GlobStep>> compile_glob(std::string_view glob) {
  std::vector<GlobStep> steps;
  for (std::size_t i = 0; i < glob.size(); ++i) {
    GlobStep step;
    const char c = glob[i];
    if (c == '*') {
      step.accepts.set();
      step.star = true;
    } else if (c == '?') {
      step.accepts.set();
    } else if (c == '\\') {
      if (++i == glob.size()) return std::nullopt;
      step.accepts.set(static_cast<unsigned char>(glob[i]));
    } else if (c == '[') {
      std::size_t j = i + 1;
      const bool negated = j < glob.size() && (glob[j] == '!' || glob[j] == '^');
      if (negated) ++j;
      std::bitset<256> set;
      bool first = true;
      for (; j < glob.size() && (first || glob[j] != ']'); ++j, first = false) {
        const auto low = static_cast<unsigned char>(glob[j]);
        if (j + 2 < glob.size() && glob[j + 1] == '-' && glob[j + 2] != ']') {
          const auto high = static_cast<unsigned char>(glob[j + 2]);
          for (unsigned b = low; b <= high; ++b) set.set(b);
          j += 2;
        } else {
          set.set(low);
        }
      }
      if (j >= glob.size()) return std::nullopt;
      step.accepts = negated ? ~set : set;
      i = j;
    } else {
      step.accepts.set(static_cast<unsigned char>(c));
    }
    steps.push_back(step);
  }
  return steps;
}

bool intersect(const std::vector<GlobStep>& a, const std::vector<GlobStep>& b) {
  // Search over pairs (position in a, position in b): a star may be skipped (it matched nothing
  // more), and both advance on one byte both accept (a star stays where it is).
  std::set<std::pair<std::size_t, std::size_t>> seen;
  std::vector<std::pair<std::size_t, std::size_t>> todo{{0, 0}};
  while (!todo.empty()) {
    auto [i, j] = todo.back();
    todo.pop_back();
    if (!seen.insert({i, j}).second) continue;
    if (i == a.size() && j == b.size()) return true;
    if (i < a.size() && a[i].star) todo.push_back({i + 1, j});
    if (j < b.size() && b[j].star) todo.push_back({i, j + 1});
    if (i < a.size() && j < b.size() && (a[i].accepts & b[j].accepts).any())
      todo.push_back({a[i].star ? i : i + 1, b[j].star ? j : j + 1});
  }
  return false;
}

}  // namespace

bool is_valid_tenant_name(std::string_view name) { return is_valid_domain_name(name); }

bool globs_overlap(std::string_view a, std::string_view b) {
  auto ca = compile_glob(a), cb = compile_glob(b);
  return ca && cb && intersect(*ca, *cb);
}

Result<TenantSpec> parse_tenant_flag(std::string_view text) {
  using R = Result<TenantSpec>;
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return R::fail("'" + std::string(text) + "' is not NAME=DOMAIN_GLOB[,...]");
  TenantSpec spec{std::string(text.substr(0, eq)), {}};
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const auto comma = rest.find(',');
    spec.globs.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return R::ok(std::move(spec));
}

Result<TenantMap> TenantMap::create(std::vector<TenantSpec> specs) {
  using R = Result<TenantMap>;
  if (specs.size() > kMaxTenants) return R::fail("at most " + std::to_string(kMaxTenants) + " tenants");
  for (std::size_t t = 0; t < specs.size(); ++t) {
    const TenantSpec& spec = specs[t];
    if (!is_valid_tenant_name(spec.name))
      return R::fail("tenant name '" + spec.name + "' must be 1-63 characters of letters, digits, '_', '-', '.'");
    for (std::size_t u = 0; u < t; ++u)
      if (specs[u].name == spec.name) return R::fail("tenant '" + spec.name + "' is declared twice");
    if (spec.globs.empty()) return R::fail("tenant '" + spec.name + "' names no domain");
    if (spec.globs.size() > kMaxTenantGlobs)
      return R::fail("tenant '" + spec.name + "' has more than " + std::to_string(kMaxTenantGlobs) + " globs");
    for (const auto& glob : spec.globs) {
      if (glob.empty()) return R::fail("tenant '" + spec.name + "' has an empty domain glob");
      if (!compile_glob(glob))
        return R::fail("tenant '" + spec.name + "': glob '" + glob + "' has an unclosed '[' or a trailing '\\'");
    }
    for (std::size_t u = 0; u < t; ++u)
      for (const auto& mine : spec.globs)
        for (const auto& theirs : specs[u].globs)
          if (globs_overlap(mine, theirs))
            return R::fail("tenants '" + specs[u].name + "' and '" + spec.name +
                           "' overlap: a domain could match both '" + theirs + "' and '" + mine +
                           "'; a domain belongs to one tenant at most");
  }
  TenantMap map;
  map.tenants_ = std::move(specs);
  return R::ok(std::move(map));
}

const TenantSpec* TenantMap::find(std::string_view name) const {
  for (const auto& t : tenants_)
    if (t.name == name) return &t;
  return nullptr;
}

std::optional<std::string> TenantMap::tenant_of(std::string_view domain) const {
  const std::string name(domain);
  for (const auto& t : tenants_)
    for (const auto& glob : t.globs)
      if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) return t.name;
  return std::nullopt;
}

bool TenantMap::contains(std::string_view tenant, std::string_view domain) const {
  auto owner = tenant_of(domain);
  return owner && *owner == tenant;
}

}  // namespace skewscope
