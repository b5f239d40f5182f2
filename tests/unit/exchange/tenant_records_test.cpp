// Records carry their domains' tenants (docs/tenants.md): encoded and decoded whole, checked
// against the owner's map, and covered by the signature.
#include <doctest/doctest.h>

#include "exchange/record_intake.hpp"
#include "exchange/record_signing.hpp"

namespace skewscope::exchange {
namespace {

constexpr std::int64_t kSec = 1'000'000'000;
const std::string kKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const std::int64_t kNow = 1'790'000'000 * kSec;

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TenantMap tenants_ab() {
  auto map = TenantMap::create({{"a", {"a*"}}, {"b", {"b*"}}});
  REQUIRE(map);
  return *map;
}

WireBatch batch(std::vector<std::string> domains, std::vector<std::string> tenants) {
  WireBatch b;
  b.host = "node1";
  b.domains = std::move(domains);
  b.domain_tenants = std::move(tenants);
  return b;
}

Result<WireBatch, RecordReject> take_open(RecordIntake& intake, const WireBatch& b) {
  const std::string record = encode_record(b);
  return intake.take(bytes_of(record), "k", 0, nullptr, kNow, 0);
}

}  // namespace

TEST_CASE("a record's domain tenants round-trip; a count or a name out of shape is invalid_content") {
  const WireBatch b = batch({"a1", "x"}, {"a", ""});
  const std::string bytes = encode_record(b);
  auto decoded = decode_record(bytes_of(bytes));
  REQUIRE(decoded);
  CHECK(*decoded.value == b);
  const std::string one_short = encode_record(batch({"a1", "x"}, {"a"}));
  CHECK((decode_record(bytes_of(one_short)).error == RecordReject::invalid_content));
  const std::string bad_name = encode_record(batch({"a1"}, {"no spaces"}));
  CHECK((decode_record(bytes_of(bad_name)).error == RecordReject::invalid_content));
  const std::string none = encode_record(batch({"a1"}, {}));
  REQUIRE(decode_record(bytes_of(none)));
  CHECK(decode_record(bytes_of(none))->domain_tenants.empty());
}

TEST_CASE("the owner takes a record only when each domain's tenant is the one its own map gives") {
  RecordIntake owner("node2", {"a2"}, kDefaultReplayWindowNs, DomainClaims(), tenants_ab());
  CHECK(take_open(owner, batch({"a1", "infra"}, {"a", ""})));
  CHECK((take_open(owner, batch({"a1"}, {"b"})).error == RecordReject::tenant_mismatch));
  CHECK((take_open(owner, batch({"infra"}, {"a"})).error == RecordReject::tenant_mismatch));
  // A sender without tenants says none: wrong for a domain the owner gives a tenant.
  CHECK((take_open(owner, batch({"b1"}, {})).error == RecordReject::tenant_mismatch));
  CHECK(take_open(owner, batch({"infra"}, {})));
  // An owner without tenants refuses a record that gives a domain one.
  RecordIntake plain("node2", {"a2"});
  CHECK((take_open(plain, batch({"a1"}, {"a"})).error == RecordReject::tenant_mismatch));
  CHECK(take_open(plain, batch({"a1"}, {})));
  // A refused record binds no domain to its signer: node3 may then speak for b1 itself.
  RecordIntake claims("node2", {"a2"}, kDefaultReplayWindowNs, DomainClaims(), tenants_ab());
  CHECK((take_open(claims, batch({"b1"}, {"a"})).error == RecordReject::tenant_mismatch));
  WireBatch other = batch({"b1"}, {"b"});
  other.host = "node3";
  CHECK(take_open(claims, other));
}

TEST_CASE("the tenants are under the signature: changing one breaks it") {
  auto key = parse_key_text(kKey, "k");
  REQUIRE(key);
  ExchangeKeys keys{{*key}};
  RecordIntake owner("node2", {"a2"}, kDefaultReplayWindowNs, DomainClaims(), tenants_ab());
  SignedFields fields{key->id, 7, 1, kNow, "node1"};
  std::string signed_record = sign_record(keys.keys[0], fields, "k", encode_record(batch({"a1"}, {"a"})));
  // The same record with the tenant's one byte changed in place ("a" -> "b").
  const std::string needle = std::string("\xc2\x01\x01", 3) + "a";  // field 24, length 1, "a"
  const auto at = signed_record.find(needle);
  REQUIRE(at != std::string::npos);
  std::string forged = signed_record;
  forged[at + needle.size() - 1] = 'b';
  CHECK((owner.take(bytes_of(forged), "k", 0, &keys, kNow, 0).error == RecordReject::bad_signature));
  CHECK(owner.take(bytes_of(signed_record), "k", 0, &keys, kNow, 0));
}

}  // namespace skewscope::exchange
