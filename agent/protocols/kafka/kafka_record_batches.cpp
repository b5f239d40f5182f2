// ConnectionTracker's naming of record batches (magic 2) inside a Produce request's or a Fetch
// response's records field, from their uncompressed v2 header, CRC-32C checked when the whole
// batch was captured. Its own file because the batch format is the same whichever API carries it.
#include <string>
#include <utility>

#include "protocols/kafka/kafka_connection_state.hpp"

namespace skewscope::protocols::kafka {
namespace {

constexpr std::uint32_t kBatchHeaderSize = 61;  // baseOffset .. records count
constexpr std::uint32_t kCrcStart = 21;         // CRC-32C covers attributes .. end

}  // namespace

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

}  // namespace skewscope::protocols::kafka
