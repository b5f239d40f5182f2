// Kafka wire protocol, ONE client↔broker TCP connection, both directions: names every record batch
// a producer sends (Produce requests) and a consumer receives (Fetch responses), so that the two
// halves of a batch can be paired across the broker. Pure: no I/O, no clock, bounded memory.
//
// Requests teach it correlation id → (api key, version); responses are parsed with them (Kafka
// answers in request order on a connection). A request or response may come in any number of
// chunks; only each chunk's captured prefix is known. Every structure is stepped over by its
// length fields, so an uncaptured record body costs nothing; what cannot be named for lack of
// captured bytes is counted (see Counters), never guessed. Batches are named from their v2 header
// (magic 2), which is never compressed: no decompression is needed. See README.md for the pairing
// key and its exceptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocols/captured_chunk.hpp"

namespace skewscope::protocols::kafka {

enum class Direction : std::uint8_t {
  kToBroker,    // client → broker: requests
  kFromBroker,  // broker → client: responses
};

// One side of one record batch.
struct BatchHalf {
  enum class Side : std::uint8_t {
    kProduced,  // from a Produce request; ts = the chunk holding the batch's first byte
    kFetched,   // from a Fetch response; ts = the chunk holding the batch's last byte
  };
  Side side = Side::kProduced;
  std::string topic;
  std::int32_t partition = -1;
  std::int64_t producer_id = -1;  // -1: not an idempotent/transactional producer
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::uint32_t crc = 0;  // CRC-32C of the batch from attributes to its end
  std::int32_t record_count = 0;
  std::int16_t attributes = 0;  // bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control
  std::int64_t base_timestamp = 0;
  std::int64_t max_timestamp = 0;
  // Fetched: from the batch. Produced: from the ProduceResponse (first batch of the partition's
  // records gets base_offset, the next ones base_offset + the records before them); empty when the
  // producer asked for no response (acks=0), the partition failed, or the response was not seen.
  std::optional<std::int64_t> base_offset;
  // Produced: the ProduceResponse's log_append_time_ms when the broker stamps LogAppendTime.
  std::optional<std::int64_t> log_append_time_ms;
  std::uint64_t ts_ns = 0;
  std::uint32_t seq = 0;          // TCP sequence number of the batch's first byte
  std::uint32_t batch_bytes = 0;  // 12 + batchLength
  std::int32_t correlation_id = 0;
  bool crc_checked = false;  // the whole batch was captured and its CRC-32C matched

  int compression() const { return attributes & 0x7; }  // 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
  bool log_append_time() const { return (attributes & 0x8) != 0; }
  bool control() const { return (attributes & 0x20) != 0; }
};

// The key under which the two halves of a batch meet (README.md explains the choice).
struct PairingKey {
  enum class Kind : std::uint8_t {
    kIdempotent,  // (topic, partition, producer id, epoch, base sequence)
    kCrc,         // (topic, partition, crc)
    kOffset,      // (topic, partition, base offset)
  };
  Kind kind = Kind::kCrc;
  std::string topic;
  std::int32_t partition = -1;
  std::int64_t a = 0;  // producer id | crc | base offset
  std::int64_t b = 0;  // epoch        | 0   | 0
  std::int64_t c = 0;  // base sequence| 0   | 0
  bool operator==(const PairingKey&) const = default;
};
// The key a half is looked up under: idempotent key when the batch has a producer id; else, for a
// fetched batch whose timestamps the broker rewrote (LogAppendTime: its CRC changed), the offset
// key; else the CRC key. Produced halves are indexed under this key AND their offset_key, so a
// fetched half meets its produced half under its primary key, or under its offset key when the
// broker rewrote the batch in a way no header bit shows (recompression). README.md has the rule.
std::optional<PairingKey> primary_key(const BatchHalf&);
// The offset key, when the half knows its base offset (fetched: always; produced: from the
// ProduceResponse): the fallback that survives any rewrite by the broker.
std::optional<PairingKey> offset_key(const BatchHalf&);

// Whether the first bytes a client sent can be a Kafka request header (size, api key, version,
// correlation id in plausible ranges; librdkafka and the Java client open with ApiVersions): for
// choosing which connections get a tracker. Needs the first 12 bytes.
bool looks_like_request(std::span<const std::uint8_t> first_bytes);

struct Counters {
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;      // sum of chunk lengths
  std::uint64_t requests = 0;   // request headers read
  std::uint64_t responses = 0;  // response headers read and matched to a request
  std::uint64_t produce_requests = 0;
  std::uint64_t fetch_responses = 0;
  std::uint64_t batches_produced = 0;       // BatchHalf reported, side kProduced
  std::uint64_t batches_fetched = 0;        // BatchHalf reported, side kFetched
  std::uint64_t batches_crc_checked = 0;    // of those, CRC-32C verified over captured bytes
  std::uint64_t batches_unnamed = 0;        // batch seen (its length known) but header not captured
  std::uint64_t regions_unnamed = 0;        // records/partitions skipped without knowing their batches
  std::uint64_t partial_fetch_batches = 0;  // a fetch's last batch cut by the broker's size limit
  std::uint64_t old_magic_batches = 0;      // message sets of magic 0/1: no producer fields
  std::uint64_t messages_unparsed = 0;      // request/response structure lost to uncaptured bytes
  std::uint64_t bytes_skipped = 0;          // uncaptured bytes stepped over
  std::uint64_t sync_losses = 0;            // a size field in uncaptured bytes, or a sequence gap
  std::uint64_t resyncs = 0;
  std::uint64_t mid_stream_starts = 0;  // a direction whose first chunk did not start a message
  std::uint64_t bytes_out_of_sync = 0;
  std::uint64_t responses_unmatched = 0;       // correlation id of no pending request
  std::uint64_t produce_without_response = 0;  // produced halves reported without base offset
  std::uint64_t unsupported_versions = 0;      // Produce/Fetch versions this parser does not know
  std::uint64_t invalid = 0;                   // malformed: bad sizes, lengths beyond their container
  std::uint64_t buffer_overflows = 0;          // captured bytes dropped by the per-message bound
};

struct Options {
  std::size_t max_buffered_bytes = 1u << 20;  // captured bytes kept per message being assembled
  std::size_t max_chunks_per_message = 4096;  // chunk boundaries (for timestamps) kept per message
  std::size_t max_pending_requests = 1024;    // requests awaiting their response
  std::uint32_t max_message_size = 1u << 30;  // a larger size field is invalid
};

class ConnectionTracker {
 public:
  explicit ConnectionTracker(Options options = {});
  ~ConnectionTracker();
  ConnectionTracker(ConnectionTracker&&) noexcept;
  ConnectionTracker& operator=(ConnectionTracker&&) noexcept;

  // Feeds the next chunk of one direction, chunks of each direction in stream order and the two
  // directions interleaved in time order (a response after its request). Batches named by it are
  // appended to `out`: fetched ones when their response is complete, produced ones when their
  // ProduceResponse is (or at once with acks=0).
  void feed(Direction direction, const CapturedChunk& chunk, std::vector<BatchHalf>& out);
  // The connection ended: produced batches still waiting for a response are reported without a
  // base offset.
  void flush(std::vector<BatchHalf>& out);

  const Counters& counters() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace skewscope::protocols::kafka
