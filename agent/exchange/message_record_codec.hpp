// Kafka record batch halves in an exchange record (HalvesBatch.message_halves,
// proto/skewscope/v1/message_halves.proto): WireMessageHalf <-> protobuf, and the record key
// that brings every half of a batch to one owner. Pure; record_codec.cpp calls it, so malformed
// message halves reject the whole record like any other malformed content (a counted
// RecordReject).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exchange/record_codec.hpp"
#include "protocols/kafka/kafka_connection.hpp"
#include "skewscope/result.hpp"

namespace skewscope::v1 {
class HalvesBatch;
}

namespace skewscope::exchange {

// The record key of a batch's halves: "kafka/TOPIC/PARTITION". Both halves of a batch (and the
// fetches of every consumer) name the same topic-partition, hence one Kafka partition of the
// exchange and one owner. A host-pair key ("min|max" of two addresses) never contains '/'.
std::string message_key(const std::string& topic, std::int32_t partition);

// Decoded halves are checked against these; anything beyond is invalid_content.
inline constexpr std::size_t kMaxTopicBytes = 249;  // Kafka's own limit on topic names

// The batch's Kafka halves; invalid_content when any is out of range.
Result<std::vector<WireMessageHalf>, RecordReject> decode_message_halves(const v1::HalvesBatch& pb,
                                                                         std::size_t domain_count);
void encode_message_halves(const std::vector<WireMessageHalf>& halves, v1::HalvesBatch& pb);

// The batch's naming fields as the Kafka parser reports them, for protocols::kafka::primary_key.
protocols::kafka::BatchHalf to_batch_half(const WireMessageHalf& h);
// The shipped form of a parsed half (domain: the caller's index; realtime_ns: the half's clock).
WireMessageHalf to_wire(const protocols::kafka::BatchHalf& b, std::uint32_t domain, std::int64_t realtime_ns,
                        const FlowKey& consumer);

}  // namespace skewscope::exchange
