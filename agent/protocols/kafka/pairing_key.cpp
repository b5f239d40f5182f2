#include "protocols/kafka/kafka_connection.hpp"

namespace skewscope::protocols::kafka {

std::optional<PairingKey> offset_key(const BatchHalf& h) {
  if (!h.base_offset) return std::nullopt;
  return PairingKey{PairingKey::Kind::kOffset, h.topic, h.partition, *h.base_offset, 0, 0};
}

std::optional<PairingKey> primary_key(const BatchHalf& h) {
  // The broker keeps producer id, epoch and base sequence of an idempotent batch whatever else it
  // rewrites, and the producer never reuses them for another batch of that partition.
  if (h.producer_id >= 0)
    return PairingKey{
        PairingKey::Kind::kIdempotent, h.topic, h.partition, h.producer_id, h.producer_epoch, h.base_sequence};
  // LogAppendTime: the broker rewrote the timestamps, so the CRC it serves is not the producer's.
  // Only the fetched batch tells reliably (its attributes): a ProduceResponse's log_append_time_ms
  // is not trusted for this (librdkafka's mock cluster answers 1234 and keeps CreateTime).
  if (h.side == BatchHalf::Side::kFetched && h.log_append_time()) return offset_key(h);
  return PairingKey{PairingKey::Kind::kCrc, h.topic, h.partition, static_cast<std::int64_t>(h.crc), 0, 0};
}

bool looks_like_request(std::span<const std::uint8_t> b) {
  if (b.size() < 12) return false;
  const std::uint32_t size =
      (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  const int key = (b[4] << 8) | b[5];
  const int version = (b[6] << 8) | b[7];
  const bool corr_non_negative = (b[8] & 0x80) == 0;
  // ApiVersions (key 18) at most v3 today; any request key below 100, any version below 30.
  return size >= 8 && size < (1u << 30) && key < 100 && version < 30 && corr_non_negative;
}

}  // namespace skewscope::protocols::kafka
