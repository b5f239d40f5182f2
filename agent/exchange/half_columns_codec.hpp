// The TCP and ZMTP halves of a record as columns (halves.proto `HalfColumns`). Pure: record_codec
// calls these when the envelope's columns flag is set; malformed content is a rejected record
// (RecordReject::invalid_content), never a partial batch.
//
// Row form costs a tag and a length per half and every field in full (about 14 bytes a half);
// in columns a half of an ongoing TCP stream costs its flow, a sequence number and size that
// match what the stream predicts (one byte each) and its time after the previous half.
#pragma once

#include <cstdint>
#include <vector>

#include "exchange/record_codec.hpp"
#include "skewscope/result.hpp"

namespace skewscope::v1 {
class HalfColumns;
}

namespace skewscope::exchange {

// Halves must reference domains in range (as encode_record requires); deltas from `base_realtime_ns`.
void encode_half_columns(const std::vector<WireHalf>& halves, std::int64_t base_realtime_ns, v1::HalfColumns& out);

// The halves, in their order; invalid_content when a column's length disagrees with the others,
// an index or port is out of range, a kind/transport is unknown, a size is 0 or beyond 32 bits,
// or there are more than kMaxHalvesPerRecord.
Result<std::vector<WireHalf>, RecordReject> decode_half_columns(const v1::HalfColumns& in, std::size_t domains,
                                                                std::int64_t base_realtime_ns);

}  // namespace skewscope::exchange
