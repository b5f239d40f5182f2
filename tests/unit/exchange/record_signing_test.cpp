// The signed envelope (record_signing.hpp): round trip, every damaged or foreign record refused by
// its reason, and a fixed vector whose MAC was computed apart from this code (Python's hmac).
#include "exchange/record_signing.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace skewscope::exchange {
namespace {

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string read_file(const std::string& name) {
  std::ifstream in(std::string(SKEWSCOPE_EXCHANGE_DATA) + "/" + name, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

ExchangeKey key_of(const std::string& hex) {
  auto k = parse_key_text(hex, "test");
  REQUIRE(k);
  return *k;
}

const std::string kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const std::string kOtherHex = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

SignedFields fields() {
  SignedFields f;
  f.epoch = 0x1122334455667788ULL;
  f.sequence = 7;
  f.signed_at_ns = 1'790'000'000'000'000'000;
  f.signer = "node1";
  return f;
}

// A version-1 record (record_codec.hpp) holding an empty batch of host "node1".
const std::string kPayload = unhex("534b0100070000000a056e6f646531");

}  // namespace

TEST_CASE("a signed record opens with its key and gives back its fields and payload") {
  ExchangeKeys keys{{key_of(kKeyHex)}};
  const std::string rec = sign_record(keys.keys[0], fields(), "10.0.0.1|10.0.0.2", kPayload);
  auto opened = open_signed_record(bytes_of(rec), "10.0.0.1|10.0.0.2", &keys);
  REQUIRE(opened);
  SignedFields want = fields();
  want.key_id = keys.keys[0].id;
  CHECK(opened->fields == want);
  CHECK(std::string(reinterpret_cast<const char*>(opened->payload.data()), opened->payload.size()) == kPayload);
}

TEST_CASE("the fixed vector: layout and MAC as docs/security.md describes them") {
  // MAC computed apart from this code, with Python: hmac.new(key, b"skewscope.v2\0" +
  // len(k).to_bytes(2, "little") + k + record_before_mac, hashlib.sha256), k = b"10.0.0.1|10.0.0.2".
  const std::string want = unhex(
      "534b0200"                        // "SK", version 2, flags 0
      "ee4ab4dbd677f8a3"                // key id: SHA-256("skewscope exchange key id" || key)[0:8]
      "8877665544332211"                // epoch
      "0700000000000000"                // sequence
      "0000f323845bd718"                // signed at (ns)
      "05"                              // signer length
      "6e6f646531"                      // "node1"
      "0f000000"                        // payload length
      "534b0100070000000a056e6f646531"  // payload: a version-1 record
      "1094473dc9765ba79941b44705a056bb51748849ffd3bca394c448a4c6c2a69c");  // MAC
  ExchangeKeys keys{{key_of(kKeyHex)}};
  CHECK(sign_record(keys.keys[0], fields(), "10.0.0.1|10.0.0.2", kPayload) == want);
  auto opened = open_signed_record(bytes_of(want), "10.0.0.1|10.0.0.2", &keys);
  REQUIRE(opened);
  CHECK(opened->fields.sequence == 7);
  CHECK(opened->fields.signer == "node1");
}

TEST_CASE("a record captured from an agent opens with its key and holds that agent's batch") {
  const std::string rec = read_file("signed_record.bin");
  ExchangeKeys keys{{key_of(read_file("signed_record.key.hex"))}};
  auto opened = open_signed_record(bytes_of(rec), "10.77.0.1|10.77.0.2", &keys);
  REQUIRE(opened);
  CHECK(opened->fields.signer == "node2");
  CHECK(opened->fields.key_id == keys.keys[0].id);
  DecodedRecord batch = decode_record(opened->payload);
  REQUIRE(batch);
  CHECK(batch->host == "node2");
  CHECK(batch->domains == std::vector<std::string>{"h2"});
  CHECK(!batch->halves.empty());
  // Another Kafka key, another key, one byte changed anywhere: refused.
  CHECK((open_signed_record(bytes_of(rec), "10.77.0.1|10.77.0.3", &keys).error == RecordReject::bad_signature));
  ExchangeKeys other{{key_of(kOtherHex)}};
  CHECK((open_signed_record(bytes_of(rec), "10.77.0.1|10.77.0.2", &other).error == RecordReject::unknown_signer));
  for (std::size_t i = 0; i < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] = static_cast<char>(bad[i] ^ 0x80);
    CHECK_MESSAGE(!open_signed_record(bytes_of(bad), "10.77.0.1|10.77.0.2", &keys), "byte " << i << " changed");
  }
}

TEST_CASE("every truncated prefix and every extra byte is refused") {
  ExchangeKeys keys{{key_of(kKeyHex)}};
  const std::string rec = sign_record(keys.keys[0], fields(), "k", kPayload);
  for (std::size_t n = 0; n < rec.size(); ++n) {
    auto opened = open_signed_record(bytes_of(rec.substr(0, n)), "k", &keys);
    CHECK_MESSAGE(!opened, "prefix of " << n << " bytes accepted");
  }
  CHECK((open_signed_record(bytes_of(rec + "x"), "k", &keys).error == RecordReject::trailing_bytes));
}

TEST_CASE("a record changed in any byte is never accepted") {
  ExchangeKeys keys{{key_of(kKeyHex)}};
  const std::string rec = sign_record(keys.keys[0], fields(), "k", kPayload);
  for (std::size_t i = 0; i < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    CHECK_MESSAGE(!open_signed_record(bytes_of(bad), "k", &keys), "byte " << i << " flipped and accepted");
  }
  // Past the header, a change is a bad signature (not some layout reason an attacker could steer).
  std::string bad = rec;
  bad[rec.size() - 40] ^= 0x40;
  CHECK((open_signed_record(bytes_of(bad), "k", &keys).error == RecordReject::bad_signature));
}

TEST_CASE("the Kafka key is signed: a record re-keyed into another host pair is refused") {
  ExchangeKeys keys{{key_of(kKeyHex)}};
  const std::string rec = sign_record(keys.keys[0], fields(), "10.0.0.1|10.0.0.2", kPayload);
  CHECK((open_signed_record(bytes_of(rec), "10.0.0.1|10.0.0.3", &keys).error == RecordReject::bad_signature));
}

TEST_CASE("a key this agent does not hold is an unknown signer; rotation: either of two keys verifies") {
  const ExchangeKey a = key_of(kKeyHex), b = key_of(kOtherHex);
  ExchangeKeys only_a{{a}}, both{{b, a}};
  const std::string by_b = sign_record(b, fields(), "k", kPayload);
  CHECK((open_signed_record(bytes_of(by_b), "k", &only_a).error == RecordReject::unknown_signer));
  CHECK(open_signed_record(bytes_of(by_b), "k", &both));
  CHECK(open_signed_record(bytes_of(sign_record(a, fields(), "k", kPayload)), "k", &both));
  // A forger who names a known key id but signs with another secret: bad signature.
  ExchangeKey forged = b;
  forged.id = a.id;
  std::string rec = sign_record(forged, fields(), "k", kPayload);
  std::copy(a.id.begin(), a.id.end(), rec.begin() + 4);
  CHECK((open_signed_record(bytes_of(rec), "k", &only_a).error == RecordReject::bad_signature));
}

TEST_CASE("unsigned, foreign, oversized and nameless records are refused by their reason") {
  ExchangeKeys keys{{key_of(kKeyHex)}};
  CHECK((open_signed_record(bytes_of(kPayload), "k", &keys).error == RecordReject::unsigned_record));
  CHECK((open_signed_record(bytes_of("hello, kafka"), "k", &keys).error == RecordReject::bad_magic));
  CHECK((open_signed_record(bytes_of(std::string("SK\x09\x00", 4) + std::string(80, 'x')), "k", &keys).error ==
         RecordReject::unknown_version));
  std::string flagged = sign_record(keys.keys[0], fields(), "k", kPayload);
  flagged[3] = 1;
  CHECK((open_signed_record(bytes_of(flagged), "k", &keys).error == RecordReject::unknown_version));
  std::string huge = sign_record(keys.keys[0], fields(), "k", std::string(kMaxRecordBytes, 'x'));
  CHECK((open_signed_record(bytes_of(huge), "k", &keys).error == RecordReject::oversized));
  SignedFields nameless = fields();
  nameless.signer.clear();
  CHECK((open_signed_record(bytes_of(sign_record(keys.keys[0], nameless, "k", kPayload)), "k", &keys).error ==
         RecordReject::invalid_content));
}

TEST_CASE("without keys (insecure mode) only the layout is checked") {
  const ExchangeKey a = key_of(kKeyHex);
  auto opened = open_signed_record(bytes_of(sign_record(a, fields(), "k", kPayload)), "other key", nullptr);
  REQUIRE(opened);
  CHECK(opened->fields.signer == "node1");
}

}  // namespace skewscope::exchange
