// Which agent speaks for which domain: a domain name from the exchange is bound to the signer
// that first used it, no other signer may use it while the binding lives, each signer speaks for
// at most `per_signer` names, and a binding unused for `idle_ns` is freed. So one broken agent can
// neither take over another's pairs nor fill the remote-domain registry (1024 names) and the
// metric label space with names of its own. No I/O; the consumer thread owns one.
//
// This agent's own domains are bound to its own host name for good: nobody else speaks for them.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "exchange/record_codec.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

inline constexpr std::size_t kDefaultDomainsPerSigner = 64;
inline constexpr std::int64_t kDefaultDomainIdleNs = 600'000'000'000;  // 10 minutes

class DomainClaims {
 public:
  DomainClaims(std::size_t per_signer = kDefaultDomainsPerSigner, std::int64_t idle_ns = kDefaultDomainIdleNs)
      : per_signer_(per_signer), idle_ns_(idle_ns) {}

  void bind_own(const std::string& host, const std::vector<std::string>& names);
  // Ok (the names bound to `signer`, their use noted) or domain_claimed / signer_domains_full,
  // in which case nothing changes.
  Result<bool, RecordReject> claim(const std::string& signer, const std::vector<std::string>& names,
                                   std::int64_t now_ns);
  std::size_t bound() const { return claims_.size(); }
  std::size_t signers() const { return per_signer_count_.size(); }

 private:
  struct Claim {
    std::string signer;
    std::int64_t last_used_ns = 0;
    bool own = false;  // never expires
  };
  void expire(std::int64_t now_ns);
  bool live(const Claim& c, std::int64_t now_ns) const { return c.own || now_ns - c.last_used_ns <= idle_ns_; }

  std::size_t per_signer_;
  std::int64_t idle_ns_;
  std::unordered_map<std::string, Claim> claims_;
  std::unordered_map<std::string, std::size_t> per_signer_count_;
  std::int64_t last_expiry_ns_ = 0;
};

}  // namespace skewscope::exchange
