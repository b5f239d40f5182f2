// Which clock (domain) a half belongs to: by cgroup, then network namespace, else the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "domains/domain_spec.hpp"
#include "skewscope/result.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

class DomainRegistry {
 public:
  // The host domain (id 0) holds events no declared domain matches, unless only_domains.
  DomainRegistry(std::string host_name, bool only_domains);

  // Resolves each spec's path to its namespace inode or cgroup id. Fails with a one-line error
  // naming the spec when a path is missing or is not a namespace / cgroup v2 directory.
  static Result<DomainRegistry> from_specs(const std::vector<DomainSpec>& specs, std::string host_name,
                                           bool only_domains);

  // Returns false (and leaves the registry unchanged) when the name or key is already used.
  bool add_netns(const std::string& name, std::uint32_t netns_ino);
  bool add_cgroup(const std::string& name, std::uint64_t cgroup_id);

  // nullopt: the event is outside every declared domain and only_domains is set. Inline: returned
  // across a call, GCC assembled the optional on the stack in two narrow stores and read it back
  // in one wide load, a stalled store forward on every half (three quarters of its samples).
  std::optional<DomainId> classify(std::uint32_t netns_ino, std::uint64_t cgroup_id) const {
    if (const DomainId* found = declared(netns_ino, cgroup_id)) return *found;
    if (only_domains_) return std::nullopt;
    return DomainId{0};
  }

  // A domain named by another host's agent (the exchange): its existing id, or a new one while
  // fewer than max_remote such names were added; nullopt when that bound is reached.
  std::optional<DomainId> intern_remote(const std::string& name, std::size_t max_remote);
  std::size_t remote_count() const { return remote_count_; }

  std::optional<DomainId> find(std::string_view name) const;
  // The declared keys, for a kernel-side filter that must match exactly what classify() matches.
  std::vector<std::uint32_t> netns_inodes() const;
  std::vector<std::uint64_t> cgroup_ids() const;
  bool only_domains() const { return only_domains_; }
  const std::string& name(DomainId id) const { return names_.at(id); }
  std::size_t size() const { return names_.size(); }

 private:
  std::optional<DomainId> add_name(const std::string& name);

  std::vector<std::string> names_;
  std::unordered_map<std::uint32_t, DomainId> by_netns_;
  std::unordered_map<std::uint64_t, DomainId> by_cgroup_;
  // The same keys in insertion order, searched linearly by classify() while there are few.
  static constexpr std::size_t kScanLimit = 16;
  // The declared domain of a netns or cgroup (a cgroup's first), or null.
  const DomainId* declared(std::uint32_t netns_ino, std::uint64_t cgroup_id) const;
  std::vector<std::pair<std::uint32_t, DomainId>> netns_scan_;
  std::vector<std::pair<std::uint64_t, DomainId>> cgroup_scan_;
  bool only_domains_;
  std::size_t remote_count_ = 0;
};

}  // namespace skewscope
