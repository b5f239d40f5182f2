#include "exchange/record_signing.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

namespace skewscope::exchange {
namespace {

constexpr char kMacLabel[] = "skewscope.v2";  // with its terminating 0: separates this MAC from any other use

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

// HMAC-SHA256 through OpenSSL 3's EVP_MAC (the HMAC_CTX API is deprecated there), fed in two
// parts so that a record is never copied to be authenticated.
// nullopt when OpenSSL fails: then nothing verifies.
std::optional<std::array<std::uint8_t, kMacBytes>> mac_of(const std::string& secret, std::string_view kafka_key,
                                                          std::span<const std::uint8_t> signed_bytes) {
  static EVP_MAC* const hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  std::string prefix(kMacLabel, sizeof kMacLabel);
  const auto key_len = static_cast<std::uint16_t>(std::min<std::size_t>(kafka_key.size(), 0xffff));
  prefix += static_cast<char>(key_len & 0xff);
  prefix += static_cast<char>(key_len >> 8);
  prefix.append(kafka_key.substr(0, key_len));
  std::array<std::uint8_t, kMacBytes> mac{};
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(hmac ? EVP_MAC_CTX_new(hmac) : nullptr,
                                                                EVP_MAC_CTX_free);
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
  std::size_t out_len = 0;
  if (ctx && EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), params) &&
      EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(prefix.data()), prefix.size()) &&
      EVP_MAC_update(ctx.get(), signed_bytes.data(), signed_bytes.size()) &&
      EVP_MAC_final(ctx.get(), mac.data(), &out_len, mac.size()) && out_len == mac.size())
    return mac;
  return std::nullopt;
}

using Opened = Result<OpenedRecord, RecordReject>;

}  // namespace

std::string sign_record(const ExchangeKey& key, SignedFields fields, std::string_view kafka_key,
                        std::string_view payload) {
  std::string out = {'S', 'K', static_cast<char>(kSignedRecordVersion), 0};
  out.append(reinterpret_cast<const char*>(key.id.data()), key.id.size());
  put_u64(out, fields.epoch);
  put_u64(out, fields.sequence);
  put_u64(out, static_cast<std::uint64_t>(fields.signed_at_ns));
  const std::size_t signer_len = std::min<std::size_t>(fields.signer.size(), 255);
  out += static_cast<char>(signer_len);
  out.append(fields.signer, 0, signer_len);
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out.append(payload);
  // Without a MAC (OpenSSL failed) the record goes out with zeros and every reader refuses it.
  const auto mac = mac_of(key.secret, kafka_key, {reinterpret_cast<const std::uint8_t*>(out.data()), out.size()})
                       .value_or(std::array<std::uint8_t, kMacBytes>{});
  out.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  return out;
}

Opened open_signed_record(std::span<const std::uint8_t> bytes, std::string_view kafka_key, const ExchangeKeys* keys) {
  if (bytes.size() > kMaxRecordBytes) return Opened::fail(RecordReject::oversized);
  if (bytes.size() >= 2 && (bytes[0] != 'S' || bytes[1] != 'K')) return Opened::fail(RecordReject::bad_magic);
  if (bytes.size() >= 3 && bytes[2] == kRecordVersion) return Opened::fail(RecordReject::unsigned_record);
  if (bytes.size() >= 3 && bytes[2] != kSignedRecordVersion) return Opened::fail(RecordReject::unknown_version);
  if (bytes.size() < kSignedHeaderBytes) return Opened::fail(RecordReject::truncated);
  if (bytes[3] != 0) return Opened::fail(RecordReject::unknown_version);
  OpenedRecord opened;
  std::copy_n(bytes.begin() + 4, kKeyIdBytes, opened.fields.key_id.begin());
  opened.fields.epoch = get_u64(&bytes[12]);
  opened.fields.sequence = get_u64(&bytes[20]);
  opened.fields.signed_at_ns = static_cast<std::int64_t>(get_u64(&bytes[28]));
  const std::size_t signer_len = bytes[36];
  if (signer_len == 0) return Opened::fail(RecordReject::invalid_content);
  const std::size_t payload_at = kSignedHeaderBytes + signer_len + 4;
  if (bytes.size() < payload_at) return Opened::fail(RecordReject::truncated);
  opened.fields.signer.assign(reinterpret_cast<const char*>(&bytes[kSignedHeaderBytes]), signer_len);
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(bytes[payload_at - 4 + i]) << (8 * i);
  const std::size_t have = bytes.size() - payload_at;
  if (have < static_cast<std::size_t>(n) + kMacBytes) return Opened::fail(RecordReject::truncated);
  if (have > static_cast<std::size_t>(n) + kMacBytes) return Opened::fail(RecordReject::trailing_bytes);
  opened.payload = bytes.subspan(payload_at, n);
  if (keys) {
    const ExchangeKey* key = keys->find(opened.fields.key_id);
    if (!key) return Opened::fail(RecordReject::unknown_signer);
    const auto mac = mac_of(key->secret, kafka_key, bytes.first(payload_at + n));
    if (!mac || CRYPTO_memcmp(mac->data(), &bytes[payload_at + n], kMacBytes) != 0)
      return Opened::fail(RecordReject::bad_signature);
  }
  return Opened::ok(std::move(opened));
}

}  // namespace skewscope::exchange
