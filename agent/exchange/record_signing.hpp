// The signed envelope around an exchange record: who signed it (key id, signer host), when, and
// its place in the signer's sequence, with an HMAC-SHA256 over all of that, the Kafka record key
// and the record itself. Pure functions over bytes; what a reader does with the fields (replay
// window, signer's domains) is record_intake.hpp.
//
// Layout (format version 2; all integers little-endian):
//   "SK" 2 0 | key id (8) | epoch (u64) | sequence (u64) | signed at (i64, ns since the epoch,
//   CLOCK_REALTIME) | signer length (u8, 1-255) | signer | payload length (u32) | payload | MAC (32)
// The payload is a whole version-1 record (record_codec.hpp): signing wraps the serialized record,
// so whatever a HalvesBatch carries is covered without the envelope knowing it.
// MAC = HMAC-SHA256(key, "skewscope.v2" 0 | Kafka key length (u16) | Kafka key | bytes before MAC).
// The Kafka key is covered so that a record cannot be re-keyed into another host pair.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "exchange/exchange_keys.hpp"
#include "exchange/record_codec.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

inline constexpr std::uint8_t kSignedRecordVersion = 2;
inline constexpr std::size_t kMacBytes = 32;
inline constexpr std::size_t kSignedHeaderBytes = 37;  // up to the signer's length byte, included
// A record larger than this is refused before any MAC is computed: librdkafka's own default
// message.max.bytes (1 000 000) keeps every record this agent produces below it.
inline constexpr std::size_t kMaxRecordBytes = 1 << 20;

struct SignedFields {
  KeyId key_id{};
  std::uint64_t epoch = 0;  // random per agent start: a restarted signer's sequence starts anew
  std::uint64_t sequence = 0;
  std::int64_t signed_at_ns = 0;
  std::string signer;  // the signing agent's host name (--host-name)
  bool operator==(const SignedFields&) const = default;
};

struct OpenedRecord {
  SignedFields fields;
  std::span<const std::uint8_t> payload;  // the version-1 record inside, in the caller's bytes
};

// `fields.key_id` is ignored: the key's own id is written.
std::string sign_record(const ExchangeKey& key, SignedFields fields, std::string_view kafka_key,
                        std::string_view payload);

// The envelope's fields and payload. With `keys`: the key named by the record must be one of
// them (else unknown_signer) and the MAC must match (else bad_signature). Without (insecure
// mode): only the layout is checked. A version-1 record is `unsigned_record`; layout errors are
// truncated / trailing_bytes / unknown_version / bad_magic / invalid_content (signer name).
Result<OpenedRecord, RecordReject> open_signed_record(std::span<const std::uint8_t> bytes, std::string_view kafka_key,
                                                      const ExchangeKeys* keys);

}  // namespace skewscope::exchange
