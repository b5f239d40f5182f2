// ConnectionTracker's framing and public face: each direction's byte stream cut into size-prefixed
// Kafka messages across chunks and uncaptured bytes, with sync kept, lost and regained. Requests
// and responses are read in kafka_messages.cpp, their record batches in kafka_record_batches.cpp;
// kafka_connection_state.hpp holds the State the three share.
#include "protocols/kafka/kafka_connection.hpp"

#include <algorithm>
#include <memory>

#include "protocols/kafka/kafka_connection_state.hpp"

namespace skewscope::protocols::kafka {
namespace {

// Request header: size, api_key, api_version, correlation_id.
constexpr std::uint32_t kRequestFixed = 12;

// Bytes of a message that identify it: size, api key, version, correlation id / size, correlation id.
std::uint32_t header_size(Direction d) { return d == Direction::kToBroker ? kRequestFixed : 8; }

}  // namespace

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
