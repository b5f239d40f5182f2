#include "domains/domain_registry.hpp"

#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>

namespace skewscope {
namespace {

constexpr long kNsfsMagic = 0x6e736673;
constexpr long kCgroup2Magic = 0x63677270;

std::string system_error(const std::string& path) { return path + ": " + std::strerror(errno); }

}  // namespace

DomainRegistry::DomainRegistry(std::string host_name, bool only_domains) : only_domains_(only_domains) {
  names_.push_back(std::move(host_name));
}

std::optional<DomainId> DomainRegistry::add_name(const std::string& name) {
  if (find(name) || names_.size() >= 0xffff) return std::nullopt;
  names_.push_back(name);
  return static_cast<DomainId>(names_.size() - 1);
}

bool DomainRegistry::add_netns(const std::string& name, std::uint32_t netns_ino) {
  if (by_netns_.contains(netns_ino)) return false;
  auto id = add_name(name);
  if (!id) return false;
  by_netns_[netns_ino] = *id;
  netns_scan_.emplace_back(netns_ino, *id);
  return true;
}

bool DomainRegistry::add_cgroup(const std::string& name, std::uint64_t cgroup_id) {
  if (by_cgroup_.contains(cgroup_id)) return false;
  auto id = add_name(name);
  if (!id) return false;
  by_cgroup_[cgroup_id] = *id;
  cgroup_scan_.emplace_back(cgroup_id, *id);
  return true;
}

Result<DomainRegistry> DomainRegistry::from_specs(const std::vector<DomainSpec>& specs, std::string host_name,
                                                  bool only_domains) {
  DomainRegistry registry(std::move(host_name), only_domains);
  for (const auto& spec : specs) {
    const char* kind = spec.kind == DomainSpec::Kind::netns ? "netns" : "cgroup";
    const std::string label = "domain " + spec.name + "=" + kind + ":" + spec.path;
    struct stat st {};
    struct statfs fs {};
    if (stat(spec.path.c_str(), &st) != 0 || statfs(spec.path.c_str(), &fs) != 0)
      return Result<DomainRegistry>::fail(label + ": " + system_error(spec.path));
    bool added = false;
    if (spec.kind == DomainSpec::Kind::netns) {
      if (fs.f_type != kNsfsMagic)
        return Result<DomainRegistry>::fail(label + ": not a network namespace file (e.g. /run/netns/NAME)");
      added = registry.add_netns(spec.name, static_cast<std::uint32_t>(st.st_ino));
    } else {
      if (fs.f_type != kCgroup2Magic || !S_ISDIR(st.st_mode))
        return Result<DomainRegistry>::fail(label + ": not a cgroup v2 directory");
      added = registry.add_cgroup(spec.name, st.st_ino);  // a cgroup v2 id is its directory's inode
    }
    if (!added) return Result<DomainRegistry>::fail(label + ": name or " + kind + " already used by another --domain");
  }
  return Result<DomainRegistry>::ok(std::move(registry));
}

const DomainId* DomainRegistry::declared(std::uint32_t netns_ino, std::uint64_t cgroup_id) const {
  // Called for every half. A host declares a handful of domains: a scan of a short array beats
  // a hash lookup, which divides by the bucket count even in an empty table (two lookups were a
  // sixth of the agent's time per half). Many domains (a node's pods) go through the maps.
  if (by_cgroup_.size() <= kScanLimit) {
    for (const auto& [id, domain] : cgroup_scan_)
      if (id == cgroup_id) return &domain;
  } else if (auto it = by_cgroup_.find(cgroup_id); it != by_cgroup_.end()) {
    return &it->second;
  }
  if (by_netns_.size() <= kScanLimit) {
    for (const auto& [ino, domain] : netns_scan_)
      if (ino == netns_ino) return &domain;
  } else if (auto it = by_netns_.find(netns_ino); it != by_netns_.end()) {
    return &it->second;
  }
  return nullptr;
}

std::optional<DomainId> DomainRegistry::intern_remote(const std::string& name, std::size_t max_remote) {
  if (auto id = find(name)) return id;
  if (remote_count_ >= max_remote) return std::nullopt;
  auto id = add_name(name);
  if (id) ++remote_count_;
  return id;
}

std::vector<std::uint32_t> DomainRegistry::netns_inodes() const {
  std::vector<std::uint32_t> out;
  for (const auto& [ino, id] : by_netns_) out.push_back(ino);
  return out;
}

std::vector<std::uint64_t> DomainRegistry::cgroup_ids() const {
  std::vector<std::uint64_t> out;
  for (const auto& [cgroup, id] : by_cgroup_) out.push_back(cgroup);
  return out;
}

std::optional<DomainId> DomainRegistry::find(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<DomainId>(i);
  return std::nullopt;
}

}  // namespace skewscope
