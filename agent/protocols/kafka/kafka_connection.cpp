#include "protocols/kafka/kafka_connection.hpp"

#include <algorithm>
#include <array>
#include <deque>

#include "protocols/kafka/kafka_wire.hpp"

namespace skewscope::protocols::kafka {
namespace {

using wire::Reader;
using wire::SparseMessage;

constexpr std::int16_t kProduce = 0;
constexpr std::int16_t kFetch = 1;
// Versions parsed here: record batches (magic 2) need Produce v3 / Fetch v4; Fetch v13 names
// topics by id only. Flexible (compact lengths, tagged fields) from Produce v9 / Fetch v12.
constexpr std::int16_t kProduceMin = 3, kProduceMax = 10, kProduceFlexible = 9;
constexpr std::int16_t kFetchMin = 4, kFetchMax = 12, kFetchFlexible = 12;
constexpr std::uint32_t kBatchHeaderSize = 61;  // baseOffset .. records count
constexpr std::uint32_t kCrcStart = 21;         // CRC-32C covers attributes .. end
// Request header: size, api_key, api_version, correlation_id.
constexpr std::uint32_t kRequestFixed = 12;

// Bytes of a message that identify it: size, api key, version, correlation id / size, correlation id.
std::uint32_t header_size(Direction d) { return d == Direction::kToBroker ? kRequestFixed : 8; }

bool request_flexible_header(std::int16_t key, std::int16_t version) {
  return (key == kProduce && version >= kProduceFlexible) || (key == kFetch && version >= kFetchFlexible);
}

struct PendingBatch {
  BatchHalf half;
  std::int32_t last_offset_delta = 0;
};

struct PendingRequest {
  std::int32_t correlation_id = 0;
  std::int16_t api_key = 0;
  std::int16_t api_version = 0;
  std::vector<PendingBatch> produced;  // batches of a Produce request waiting for its response
};

// The "topics[] { name, partitions[] { ... } }" layout that Produce requests, Produce responses and
// Fetch responses share: walks both arrays (and their tagged fields when flexible), calling
// `partition(topic)` with r at each partition's first field; the callback reads that partition's
// fields, its trailing tags excepted. A failed read ends the walk (the Reader's error sticks).
template <typename PerPartition>
void for_each_topic_partition(Reader& r, bool flex, PerPartition&& partition) {
  const std::int64_t topics = r.length(flex);
  for (std::int64_t t = 0; r.ok() && t < topics; ++t) {
    const std::int64_t name_len = r.length(flex, true);
    std::string topic;
    if (r.ok() && name_len > 0) {
      const auto b = r.take(static_cast<std::uint32_t>(std::min<std::int64_t>(name_len, 1 << 30)));
      topic.assign(b.begin(), b.end());
    }
    const std::int64_t partitions = r.length(flex);
    for (std::int64_t p = 0; r.ok() && p < partitions; ++p) {
      partition(topic);
      if (flex) r.skip_tags();
    }
    if (flex) r.skip_tags();
  }
}

// One direction's position in the stream and the message being assembled.
struct DirectionState {
  bool started = false;
  bool in_sync = true;
  bool verified = false;  // the direction's first message header was checked
  std::uint32_t next_seq = 0;
  bool in_message = false;
  std::uint32_t message_seq = 0;  // sequence number of the message's first (size) byte
  std::uint32_t got = 0;          // message bytes consumed so far (size field included)
  std::uint64_t total = 0;        // 4 + size once the size is known, else 0
  std::array<std::uint8_t, 4> size_bytes{};
  SparseMessage message;
};

}  // namespace

struct ConnectionTracker::State {
  Options options;
  Counters counters;
  DirectionState dirs[2];
  std::deque<PendingRequest> pending;
  bool have_last_correlation = false;
  std::int32_t last_correlation = 0;

  void feed(Direction d, const CapturedChunk& c, std::vector<BatchHalf>& out);
  bool try_resync(Direction d, const CapturedChunk& c) const;
  bool plausible_start(Direction d, std::span<const std::uint8_t> header) const;
  void lose_sync(DirectionState& s);
  void complete(Direction d, std::vector<BatchHalf>& out);
  void on_request(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total, std::vector<BatchHalf>& out);
  void on_response(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total, std::vector<BatchHalf>& out);
  void parse_produce_request(Reader& r, const SparseMessage& m, std::uint32_t msg_seq, PendingRequest& req,
                             bool& acks0);
  void parse_fetch_response(Reader& r, const SparseMessage& m, std::uint32_t msg_seq, const PendingRequest& req,
                            std::vector<BatchHalf>& out);
  void parse_produce_response(Reader& r, PendingRequest& req);
  void records_field(Reader& r, bool flex, const SparseMessage& m, std::uint32_t msg_seq, BatchHalf::Side side,
                     const std::string& topic, std::int32_t partition, std::int32_t corr,
                     std::vector<PendingBatch>& out);
  void records(Reader& r, std::uint32_t end, const SparseMessage& m, std::uint32_t msg_seq, BatchHalf::Side side,
               const std::string& topic, std::int32_t partition, std::int32_t corr, std::vector<PendingBatch>& out);
  void emit_produced(PendingRequest& req, std::vector<BatchHalf>& out);
  void structure_lost(const Reader& r);
};

void ConnectionTracker::State::feed(Direction d, const CapturedChunk& chunk, std::vector<BatchHalf>& out) {
  if (chunk.length == 0) return;
  ++counters.chunks;
  counters.bytes += chunk.length;
  CapturedChunk c = chunk;
  if (c.prefix.size() > c.length) {
    ++counters.invalid;
    c.prefix = c.prefix.first(c.length);
  }
  DirectionState& s = dirs[static_cast<int>(d)];
  if (!s.started) {
    s.started = true;
    s.next_seq = c.seq;
  }
  const std::int32_t gap = seq_diff(c.seq, s.next_seq);
  s.next_seq = c.seq + c.length;
  if (gap != 0 && s.in_sync) lose_sync(s);
  if (!s.in_sync) {
    if (!try_resync(d, c)) {
      counters.bytes_out_of_sync += c.length;
      return;
    }
    ++counters.resyncs;
    s.in_sync = true;
    s.verified = true;
  }
  const std::uint32_t captured = static_cast<std::uint32_t>(c.prefix.size());
  std::uint32_t pos = 0;
  while (pos < c.length) {
    if (!s.in_message) {
      s.in_message = true;
      s.message_seq = c.seq + pos;
      s.got = 0;
      s.total = 0;
      s.message.clear();
    }
    if (s.total == 0) {  // the 4-byte size, possibly split over chunks
      if (pos >= captured) {
        counters.bytes_out_of_sync += c.length - pos;
        lose_sync(s);
        return;
      }
      if (s.got == 0 || pos == 0) s.message.mark(s.got, c.ts_ns, options.max_chunks_per_message);
      s.message.add(s.got, c.prefix.subspan(pos, 1), options.max_buffered_bytes);
      s.size_bytes[s.got++] = c.prefix[pos++];
      if (s.got < 4) continue;
      const std::uint32_t size = (std::uint32_t{s.size_bytes[0]} << 24) | (std::uint32_t{s.size_bytes[1]} << 16) |
                                 (std::uint32_t{s.size_bytes[2]} << 8) | s.size_bytes[3];
      const std::uint32_t min_size = d == Direction::kToBroker ? kRequestFixed - 4 : 4;
      if (size < min_size || size > options.max_message_size) {
        ++counters.invalid;
        counters.bytes_out_of_sync += c.length - pos;
        lose_sync(s);
        return;
      }
      s.total = 4ull + size;
      continue;
    }
    const std::uint32_t take = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.total - s.got, c.length - pos));
    if (pos == 0) s.message.mark(s.got, c.ts_ns, options.max_chunks_per_message);
    if (pos < captured) {
      const std::uint32_t have = std::min(take, captured - pos);
      if (!s.message.add(s.got, c.prefix.subspan(pos, have), options.max_buffered_bytes)) ++counters.buffer_overflows;
      if (have < take) counters.bytes_skipped += take - have;
    } else {
      counters.bytes_skipped += take;
    }
    pos += take;
    s.got += take;
    if (!s.verified && s.got >= header_size(d)) {
      // The first message of a direction must read as a request header (or as the response to a
      // pending request): a connection first seen mid-stream waits, out of sync, for one that does.
      const auto header = s.message.get(0, header_size(d));
      if (header.empty() || !plausible_start(d, header)) {
        ++counters.mid_stream_starts;
        counters.bytes_out_of_sync += c.length - pos;
        lose_sync(s);
        return;
      }
      s.verified = true;
    }
    if (s.got == s.total) {
      complete(d, out);
      s.in_message = false;
    }
  }
}

void ConnectionTracker::State::lose_sync(DirectionState& s) {
  ++counters.sync_losses;
  if (s.in_message) ++counters.messages_unparsed;
  s.in_message = false;
  s.in_sync = false;
}

// Out of sync, a chunk is trusted to start a message only if its first bytes read as one that
// belongs here: a request with a plausible header whose correlation id follows the last one seen,
// or the response to a pending request.
bool ConnectionTracker::State::try_resync(Direction d, const CapturedChunk& c) const {
  return c.prefix.size() >= header_size(d) && plausible_start(d, c.prefix.first(header_size(d)));
}

bool ConnectionTracker::State::plausible_start(Direction d, std::span<const std::uint8_t> p) const {
  auto be32 = [&](std::size_t at) {
    return static_cast<std::int32_t>((std::uint32_t{p[at]} << 24) | (std::uint32_t{p[at + 1]} << 16) |
                                     (std::uint32_t{p[at + 2]} << 8) | p[at + 3]);
  };
  const std::int32_t size = be32(0);
  if (size < 4 || static_cast<std::uint32_t>(size) > options.max_message_size) return false;
  if (d == Direction::kFromBroker) {
    const std::int32_t corr = be32(4);
    return std::any_of(pending.begin(), pending.end(),
                       [&](const PendingRequest& r) { return r.correlation_id == corr; });
  }
  if (!looks_like_request(p)) return false;
  if (!have_last_correlation) return true;
  const std::int64_t step = static_cast<std::int64_t>(be32(8)) - last_correlation;
  return step > 0 && step < (1 << 16);
}

void ConnectionTracker::State::complete(Direction d, std::vector<BatchHalf>& out) {
  DirectionState& s = dirs[static_cast<int>(d)];
  const auto total = static_cast<std::uint32_t>(s.total);
  if (d == Direction::kToBroker) {
    on_request(s.message, s.message_seq, total, out);
  } else {
    on_response(s.message, s.message_seq, total, out);
  }
}

void ConnectionTracker::State::structure_lost(const Reader& r) {
  if (r.error() == Reader::Error::kInvalid) {
    ++counters.invalid;
  } else {
    ++counters.messages_unparsed;
  }
}

void ConnectionTracker::State::on_request(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total,
                                          std::vector<BatchHalf>& out) {
  Reader r(m, 4, total);
  PendingRequest req;
  req.api_key = r.i16();
  req.api_version = r.i16();
  req.correlation_id = r.i32();
  if (!r.ok()) return structure_lost(r);
  ++counters.requests;
  have_last_correlation = true;
  last_correlation = req.correlation_id;
  bool acks0 = false;
  if (req.api_key == kProduce) {
    ++counters.produce_requests;
    if (req.api_version < kProduceMin || req.api_version > kProduceMax) {
      ++counters.unsupported_versions;
    } else {
      r.skip_string(false);  // client_id: int16 length even in flexible headers
      if (request_flexible_header(req.api_key, req.api_version)) r.skip_tags();
      parse_produce_request(r, m, msg_seq, req, acks0);
    }
  }
  if (acks0) {  // no response will come
    emit_produced(req, out);
    return;
  }
  if (pending.size() >= options.max_pending_requests) {
    PendingRequest& oldest = pending.front();
    emit_produced(oldest, out);
    pending.pop_front();
  }
  pending.push_back(std::move(req));
}

void ConnectionTracker::State::parse_produce_request(Reader& r, const SparseMessage& m, std::uint32_t msg_seq,
                                                     PendingRequest& req, bool& acks0) {
  const bool flex = req.api_version >= kProduceFlexible;
  r.skip_string(flex);  // transactional_id
  const std::int16_t acks = r.i16();
  r.i32();  // timeout
  if (!r.ok()) return structure_lost(r);
  acks0 = acks == 0;
  for_each_topic_partition(r, flex, [&](const std::string& topic) {
    const std::int32_t partition = r.i32();
    records_field(r, flex, m, msg_seq, BatchHalf::Side::kProduced, topic, partition, req.correlation_id, req.produced);
  });
  if (!r.ok()) structure_lost(r);
}

// A partition's records field (nullable bytes: batches); r ends after it whatever was captured.
void ConnectionTracker::State::records_field(Reader& r, bool flex, const SparseMessage& m, std::uint32_t msg_seq,
                                             BatchHalf::Side side, const std::string& topic, std::int32_t partition,
                                             std::int32_t corr, std::vector<PendingBatch>& out) {
  const std::int64_t size = r.length(flex);
  if (!r.ok() || size <= 0) return;
  if (static_cast<std::uint64_t>(size) > r.left()) return r.fail(Reader::Error::kInvalid);
  const std::uint32_t end = r.pos() + static_cast<std::uint32_t>(size);
  records(r, end, m, msg_seq, side, topic, partition, corr, out);
}

// The record batches in [r.pos(), end); r ends at `end` whatever was captured inside.
void ConnectionTracker::State::records(Reader& r, std::uint32_t end, const SparseMessage& m, std::uint32_t msg_seq,
                                       BatchHalf::Side side, const std::string& topic, std::int32_t partition,
                                       std::int32_t corr, std::vector<PendingBatch>& out) {
  std::uint32_t pos = r.pos();
  const bool fetched = side == BatchHalf::Side::kFetched;
  while (pos < end) {
    Reader h(m, pos, end);
    if (end - pos < kBatchHeaderSize) {
      // A fetch may end in a batch cut short by the broker's size limit; a produce may not.
      ++(fetched ? counters.partial_fetch_batches : counters.invalid);
      break;
    }
    h.i64();
    const std::int32_t batch_length = h.i32();
    if (!h.ok()) {  // where the batches in this range start and end is unknown
      ++counters.regions_unnamed;
      break;
    }
    const std::uint64_t batch_total = 12ull + static_cast<std::uint32_t>(batch_length);
    if (batch_length < 0 || batch_total > end - pos) {
      ++(fetched && batch_length >= 0 ? counters.partial_fetch_batches : counters.invalid);
      break;
    }
    const auto next = pos + static_cast<std::uint32_t>(batch_total);
    Reader b(m, pos, next);
    PendingBatch pb;
    BatchHalf& half = pb.half;
    half.base_offset = b.i64();
    b.i32();  // batchLength
    b.i32();  // partitionLeaderEpoch
    const auto magic = b.be(1);
    if (b.ok() && magic != 2) {
      ++counters.old_magic_batches;
      pos = next;
      continue;
    }
    half.crc = static_cast<std::uint32_t>(b.i32());
    half.attributes = b.i16();
    pb.last_offset_delta = b.i32();
    half.base_timestamp = b.i64();
    half.max_timestamp = b.i64();
    half.producer_id = b.i64();
    half.producer_epoch = b.i16();
    half.base_sequence = b.i32();
    half.record_count = b.i32();
    if (!b.ok() || batch_total < kBatchHeaderSize) {
      ++(b.ok() || b.error() == Reader::Error::kInvalid ? counters.invalid : counters.batches_unnamed);
      pos = next;
      continue;
    }
    const auto covered = m.get(pos + kCrcStart, static_cast<std::uint32_t>(batch_total - kCrcStart));
    if (!covered.empty()) {
      if (wire::crc32c(covered) != half.crc) {  // corrupt bytes: nothing named from them
        ++counters.invalid;
        pos = next;
        continue;
      }
      half.crc_checked = true;
    }
    half.side = side;
    half.topic = topic;
    half.partition = partition;
    half.correlation_id = corr;
    half.seq = msg_seq + pos;
    half.batch_bytes = static_cast<std::uint32_t>(batch_total);
    half.ts_ns = m.ts_at(fetched ? next - 1 : pos);
    if (!fetched) half.base_offset.reset();  // a producer's baseOffset is 0; the broker assigns it
    out.push_back(std::move(pb));
    pos = next;
  }
  r.skip(end - r.pos());
}

void ConnectionTracker::State::on_response(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total,
                                           std::vector<BatchHalf>& out) {
  Reader r(m, 4, total);
  const std::int32_t corr = r.i32();
  if (!r.ok()) return structure_lost(r);
  auto it =
      std::find_if(pending.begin(), pending.end(), [&](const PendingRequest& p) { return p.correlation_id == corr; });
  if (it == pending.end()) {
    ++counters.responses_unmatched;
    return;
  }
  // Responses come in request order: requests before this one will get none.
  for (auto skipped = pending.begin(); skipped != it; ++skipped) emit_produced(*skipped, out);
  PendingRequest req = std::move(*it);
  pending.erase(pending.begin(), it + 1);
  ++counters.responses;
  if (request_flexible_header(req.api_key, req.api_version)) r.skip_tags();
  if (req.api_key == kFetch) {
    ++counters.fetch_responses;
    if (req.api_version < kFetchMin || req.api_version > kFetchMax) {
      ++counters.unsupported_versions;
    } else {
      parse_fetch_response(r, m, msg_seq, req, out);
    }
  } else if (req.api_key == kProduce && !req.produced.empty()) {
    parse_produce_response(r, req);
  }
  emit_produced(req, out);
}

void ConnectionTracker::State::parse_fetch_response(Reader& r, const SparseMessage& m, std::uint32_t msg_seq,
                                                    const PendingRequest& req, std::vector<BatchHalf>& out) {
  const std::int16_t v = req.api_version;
  const bool flex = v >= kFetchFlexible;
  r.i32();  // throttle_time_ms
  if (v >= 7) {
    r.i16();  // error_code
    r.i32();  // session_id
  }
  std::vector<PendingBatch> batches;
  for_each_topic_partition(r, flex, [&](const std::string& topic) {
    const std::int32_t partition = r.i32();
    r.i16();              // error_code
    r.i64();              // high_watermark
    r.i64();              // last_stable_offset
    if (v >= 5) r.i64();  // log_start_offset
    const std::int64_t aborted = r.length(flex);
    if (flex) {
      for (std::int64_t a = 0; r.ok() && a < aborted; ++a) {
        r.skip(16);
        r.skip_tags();
      }
    } else if (aborted > 0) {
      r.skip(16ull * static_cast<std::uint64_t>(aborted));  // producer_id, first_offset
    }
    if (v >= 11) r.i32();  // preferred_read_replica
    records_field(r, flex, m, msg_seq, BatchHalf::Side::kFetched, topic, partition, req.correlation_id, batches);
  });
  if (!r.ok()) structure_lost(r);
  for (auto& b : batches) {
    ++counters.batches_fetched;
    counters.batches_crc_checked += b.half.crc_checked;
    out.push_back(std::move(b.half));
  }
}

void ConnectionTracker::State::parse_produce_response(Reader& r, PendingRequest& req) {
  const bool flex = req.api_version >= kProduceFlexible;
  const std::int16_t v = req.api_version;
  for_each_topic_partition(r, flex, [&](const std::string& topic) {
    const std::int32_t partition = r.i32();
    const std::int16_t error = r.i16();
    std::int64_t offset = r.i64();
    const std::int64_t log_append_time = r.i64();  // v2+
    if (v >= 5) r.i64();                           // log_start_offset
    if (v >= 8) {
      const std::int64_t errors = r.length(flex);
      for (std::int64_t e = 0; r.ok() && e < errors; ++e) {
        r.i32();
        r.skip_string(flex);
        if (flex) r.skip_tags();
      }
      r.skip_string(flex);  // error_message
    }
    if (!r.ok() || error != 0 || offset < 0) return;
    for (auto& b : req.produced) {
      if (b.half.topic != topic || b.half.partition != partition || b.half.base_offset) continue;
      b.half.base_offset = offset;
      if (log_append_time >= 0) b.half.log_append_time_ms = log_append_time;
      offset += static_cast<std::int64_t>(b.last_offset_delta) + 1;
    }
  });
  if (!r.ok()) structure_lost(r);
}

void ConnectionTracker::State::emit_produced(PendingRequest& req, std::vector<BatchHalf>& out) {
  for (auto& b : req.produced) {
    ++counters.batches_produced;
    counters.batches_crc_checked += b.half.crc_checked;
    if (!b.half.base_offset) ++counters.produce_without_response;
    out.push_back(std::move(b.half));
  }
  req.produced.clear();
}

ConnectionTracker::ConnectionTracker(Options options) : state_(std::make_unique<State>()) { state_->options = options; }
ConnectionTracker::~ConnectionTracker() = default;
ConnectionTracker::ConnectionTracker(ConnectionTracker&&) noexcept = default;
ConnectionTracker& ConnectionTracker::operator=(ConnectionTracker&&) noexcept = default;

void ConnectionTracker::feed(Direction direction, const CapturedChunk& chunk, std::vector<BatchHalf>& out) {
  state_->feed(direction, chunk, out);
}

void ConnectionTracker::flush(std::vector<BatchHalf>& out) {
  for (auto& req : state_->pending) state_->emit_produced(req, out);
  state_->pending.clear();
}

const Counters& ConnectionTracker::counters() const { return state_->counters; }

}  // namespace skewscope::protocols::kafka
