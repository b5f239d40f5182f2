// Everything a consumed record passes before any of its content is used, in order:
//   size (oversized) -> envelope and signature (record_signing: unsigned, unknown_signer,
//   bad_signature, layout) -> freshness and sequence (replay_guard: stale, replayed) -> the batch
//   inside (record_codec) -> the batch's host is the signer (signer_mismatch) -> the signer may
//   speak for the batch's domains (domain_claims: domain_claimed, signer_domains_full), after
//   the tenants the batch gives its domains are the ones this agent's own map gives them
//   (tenant_mismatch; docs/tenants.md).
// Each refusal is one RecordReject, counted by the caller; nothing of a refused record is used.
//
// Insecure mode (--exchange-insecure, no keys): version-1 records are taken, a signed record's
// signature is not checked (there is no key to check it with) and no replay state is kept; the
// domain rules still hold, with the batch's own host as the signer.
// No I/O: the consumer thread owns one and gives it the keys and the time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "domains/tenant_map.hpp"
#include "exchange/domain_claims.hpp"
#include "exchange/exchange_keys.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/replay_guard.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

class RecordIntake {
 public:
  RecordIntake(const std::string& own_host, const std::vector<std::string>& own_domains,
               std::int64_t replay_window_ns = kDefaultReplayWindowNs, DomainClaims claims = DomainClaims(),
               TenantMap tenants = {});

  // `keys` null: insecure mode. `now_realtime_ns` is this agent's CLOCK_REALTIME (freshness),
  // `now_ns` its CLOCK_MONOTONIC (how long a domain went unused).
  Result<WireBatch, RecordReject> take(std::span<const std::uint8_t> value, std::string_view kafka_key,
                                       std::int32_t partition, const ExchangeKeys* keys, std::int64_t now_realtime_ns,
                                       std::int64_t now_ns);
  const DomainClaims& claims() const { return claims_; }

 private:
  ReplayGuard replay_;
  DomainClaims claims_;
  TenantMap tenants_;
};

}  // namespace skewscope::exchange
