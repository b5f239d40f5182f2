#include "exchange/record_intake.hpp"

#include "exchange/record_signing.hpp"

namespace skewscope::exchange {

RecordIntake::RecordIntake(const std::string& own_host, const std::vector<std::string>& own_domains,
                           std::int64_t replay_window_ns, DomainClaims claims, TenantMap tenants)
    : replay_(replay_window_ns), claims_(std::move(claims)), tenants_(std::move(tenants)) {
  claims_.bind_own(own_host, own_domains);
}

Result<WireBatch, RecordReject> RecordIntake::take(std::span<const std::uint8_t> value, std::string_view kafka_key,
                                                   std::int32_t partition, const ExchangeKeys* keys,
                                                   std::int64_t now_realtime_ns, std::int64_t now_ns) {
  using Taken = Result<WireBatch, RecordReject>;
  if (value.size() > kMaxRecordBytes) return Taken::fail(RecordReject::oversized);
  std::span<const std::uint8_t> payload = value;
  std::string signer;
  const bool unsigned_v1 = value.size() >= 3 && value[0] == 'S' && value[1] == 'K' && value[2] == kRecordVersion;
  if (keys || !unsigned_v1) {
    auto opened = open_signed_record(value, kafka_key, keys);
    if (!opened) return Taken::fail(opened.error);
    if (keys) {
      auto fresh = replay_.take(opened->fields, partition, now_realtime_ns);
      if (!fresh) return Taken::fail(fresh.error);
    }
    payload = opened->payload;
    signer = std::move(opened->fields.signer);
  }
  DecodedRecord decoded = decode_record(payload);
  if (!decoded) return Taken::fail(decoded.error);
  if (signer.empty()) {
    signer = decoded->host;
  } else if (decoded->host != signer) {
    return Taken::fail(RecordReject::signer_mismatch);
  }
  // Before the claim, so that a refused record binds no domain to its signer. A sender without
  // tenants sends none: then every domain must be of no tenant here too.
  for (std::size_t i = 0; i < decoded->domains.size(); ++i) {
    const std::string sent = decoded->domain_tenants.empty() ? std::string() : decoded->domain_tenants[i];
    if (sent != tenants_.tenant_of(decoded->domains[i]).value_or("")) return Taken::fail(RecordReject::tenant_mismatch);
  }
  auto claimed = claims_.claim(signer, decoded->domains, now_ns);
  if (!claimed) return Taken::fail(claimed.error);
  return Taken::ok(std::move(*decoded.value));
}

}  // namespace skewscope::exchange
