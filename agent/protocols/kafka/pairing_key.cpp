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
    return PairingKey{PairingKey::Kind::kIdempotent, h.topic, h.partition, h.producer_id, h.producer_epoch,
                      h.base_sequence};
  // LogAppendTime: the broker rewrote the timestamps, so the CRC it serves is not the producer's.
  // Only the fetched batch tells reliably (its attributes): a ProduceResponse's log_append_time_ms
  // is not trusted for this (librdkafka's mock cluster answers 1234 and keeps CreateTime).
  if (h.side == BatchHalf::Side::kFetched && h.log_append_time()) return offset_key(h);
  return PairingKey{PairingKey::Kind::kCrc, h.topic, h.partition, static_cast<std::int64_t>(h.crc), 0, 0};
}

}  // namespace skewscope::protocols::kafka
