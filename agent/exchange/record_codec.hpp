// Kafka record value <-> batch of halves. Pure functions over bytes: a record from the topic, a
// file or a fuzzer decodes the same way, and anything malformed is a counted rejection.
//
// Layout: "SK", format version (1), flags (kRecordFlagColumns or 0), payload length (u32 little-endian), then the
// protobuf skewscope.v1.HalvesBatch (proto/skewscope/v1/halves.proto). The explicit length makes
// every truncated record detectable (a protobuf message alone may end on a field boundary).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exchange/nat_record_codec.hpp"
#include "exchange/rdma_record_codec.hpp"
#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

inline constexpr std::uint8_t kRecordVersion = 1;
// Flags (the envelope's fourth byte). Columns: the TCP and ZMTP halves are in
// HalvesBatch.columns (half_columns_codec.hpp), not in flows/halves/zmtp_halves. Every record this
// agent writes sets it; it reads both forms. A reader that knows no flags refuses such a record
// as unknown_version, counted, rather than reading it without its halves.
inline constexpr std::uint8_t kRecordFlagColumns = 1;
// How encode_record lays the halves out: columns (what the agent writes) or rows (the form before
// columns, still read; the tests write it to show that).
enum class RecordLayout : std::uint8_t { columns, rows };
inline constexpr std::size_t kEnvelopeBytes = 8;
inline constexpr std::size_t kMaxHalvesPerRecord = 1 << 16;
inline constexpr std::size_t kMaxDomainsPerRecord = 256;

// One half as shipped: no monotonic time (it means nothing on another host), the domain clock's
// wall-clock reading instead, and the domain as an index into the batch's names.
struct WireHalf {
  HalfKind kind = HalfKind::send;
  Transport transport = Transport::tcp;
  FlowKey flow;
  std::uint32_t seq = 0;
  std::uint32_t bytes = 0;
  std::int64_t realtime_ns = 0;
  std::uint32_t domain = 0;
  bool operator==(const WireHalf&) const = default;
};

// One side of one Kafka record batch as shipped (message_record_codec.hpp): the batch's naming
// fields, the domain as an index into the batch's names, the domain clock's wall-clock reading.
struct WireMessageHalf {
  enum class Kind : std::uint8_t { produced, fetched };
  Kind kind = Kind::produced;
  std::uint32_t domain = 0;
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::uint32_t crc = 0;
  std::int16_t attributes = 0;
  std::optional<std::int64_t> base_offset;
  std::int32_t records = 0;
  std::uint32_t bytes = 0;
  std::int64_t realtime_ns = 0;
  FlowKey consumer;  // fetched: the consumer's socket (src = its local end); produced: zero
  bool operator==(const WireMessageHalf&) const = default;
};

struct WireBatch {
  std::string host;
  std::vector<std::string> domains;
  std::int64_t clock_error_bound_ns = 0;  // 0: unknown
  std::uint32_t clock_status = 0;
  std::uint64_t dropped_before = 0;
  std::vector<WireHalf> halves{};
  std::vector<WireRdmaHalf> rdma_halves{};      // rdma_record_codec
  std::vector<WireMessageHalf> messages{};      // Kafka batch halves (message_record_codec.hpp)
  std::vector<WireTranslation> translations{};  // a router's address translations (nat_record_codec.hpp)
  bool forwarded = false;                       // halves re-keyed through a translation by another owner
  // The tenant of each of `domains` by the sender's map ("" none); empty: the sender has no tenants.
  std::vector<std::string> domain_tenants{};
  bool operator==(const WireBatch&) const = default;
};

enum class RecordReject : std::uint8_t {
  truncated,        // shorter than the envelope or than its declared payload
  bad_magic,        // not a skewscope record
  unknown_version,  // a format this agent does not read
  trailing_bytes,   // longer than its declared payload
  bad_protobuf,     // payload does not parse
  invalid_content,  // parses, but an index, address, kind or count is out of range
  // The signed envelope and the trust checks (record_signing.hpp, record_intake.hpp,
  // docs/security.md):
  oversized,            // larger than kMaxRecordBytes: refused before anything is computed
  unsigned_record,      // a version-1 record (no signature) while keys are configured
  bad_signature,        // the MAC does not match the record
  unknown_signer,       // signed with a key this agent does not hold
  stale,                // signed further from now than the replay window
  replayed,             // a (signer, epoch, sequence) already seen, or too old to tell
  replay_table_full,    // too many signer streams to remember within the window
  signer_mismatch,      // the batch names another host than the envelope's signer
  domain_claimed,       // names a domain another agent speaks for
  signer_domains_full,  // the signer would speak for more domains than its cap
  tenant_mismatch,      // a domain's tenant in the record is not the one this agent's tenants give it
  count_
};
inline const char* record_reject_name(RecordReject r) {
  switch (r) {
    case RecordReject::truncated: return "truncated";
    case RecordReject::bad_magic: return "bad_magic";
    case RecordReject::unknown_version: return "unknown_version";
    case RecordReject::trailing_bytes: return "trailing_bytes";
    case RecordReject::bad_protobuf: return "bad_protobuf";
    case RecordReject::invalid_content: return "invalid_content";
    case RecordReject::oversized: return "oversized";
    case RecordReject::unsigned_record: return "unsigned";
    case RecordReject::bad_signature: return "bad_signature";
    case RecordReject::unknown_signer: return "unknown_signer";
    case RecordReject::stale: return "stale";
    case RecordReject::replayed: return "replayed";
    case RecordReject::replay_table_full: return "replay_table_full";
    case RecordReject::signer_mismatch: return "signer_mismatch";
    case RecordReject::domain_claimed: return "domain_claimed";
    case RecordReject::signer_domains_full: return "signer_domains_full";
    case RecordReject::tenant_mismatch: return "tenant_mismatch";
    case RecordReject::count_: break;
  }
  return "unknown";
}

using DecodedRecord = Result<WireBatch, RecordReject>;

// Halves must reference domains[0..size) and the batch must respect the limits above.
std::string encode_record(const WireBatch& batch, RecordLayout layout = RecordLayout::columns);
DecodedRecord decode_record(std::span<const std::uint8_t> bytes);

}  // namespace skewscope::exchange
