#include "exchange/domain_claims.hpp"

namespace skewscope::exchange {

void DomainClaims::bind_own(const std::string& host, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    auto [it, added] = claims_.try_emplace(name, Claim{host, 0, true});
    if (!added) {
      if (it->second.signer != host) {
        auto count = per_signer_count_.find(it->second.signer);
        if (count != per_signer_count_.end() && --count->second == 0) per_signer_count_.erase(count);
        ++per_signer_count_[host];
      }
      it->second = Claim{host, 0, true};
    } else {
      ++per_signer_count_[host];
    }
  }
}

Result<bool, RecordReject> DomainClaims::claim(const std::string& signer, const std::vector<std::string>& names,
                                               std::int64_t now_ns) {
  using Claimed = Result<bool, RecordReject>;
  if (now_ns - last_expiry_ns_ >= 10'000'000'000) {  // a sweep every 10 s is enough for minutes of idleness
    expire(now_ns);
    last_expiry_ns_ = now_ns;
  }
  // Check every name before binding any: a refused record binds nothing.
  std::size_t fresh = 0;
  for (const auto& name : names) {
    auto it = claims_.find(name);
    if (it == claims_.end()) {
      ++fresh;
    } else if (it->second.signer != signer) {
      if (live(it->second, now_ns)) return Claimed::fail(RecordReject::domain_claimed);
      ++fresh;  // idle: free to be claimed again
    }
  }
  auto count = per_signer_count_.find(signer);
  const std::size_t held = count == per_signer_count_.end() ? 0 : count->second;
  if (held + fresh > per_signer_) return Claimed::fail(RecordReject::signer_domains_full);
  for (const auto& name : names) {
    auto [it, added] = claims_.try_emplace(name, Claim{signer, now_ns, false});
    if (added) {
      ++per_signer_count_[signer];
    } else if (it->second.signer != signer) {  // taken over from an idle signer
      auto old = per_signer_count_.find(it->second.signer);
      if (old != per_signer_count_.end() && --old->second == 0) per_signer_count_.erase(old);
      it->second = Claim{signer, now_ns, false};
      ++per_signer_count_[signer];
    } else {
      it->second.last_used_ns = now_ns;
    }
  }
  return Claimed::ok(true);
}

void DomainClaims::expire(std::int64_t now_ns) {
  for (auto it = claims_.begin(); it != claims_.end();) {
    if (live(it->second, now_ns)) {
      ++it;
      continue;
    }
    auto count = per_signer_count_.find(it->second.signer);
    if (count != per_signer_count_.end() && --count->second == 0) per_signer_count_.erase(count);
    it = claims_.erase(it);
  }
}

}  // namespace skewscope::exchange
