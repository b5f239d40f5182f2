// Address translations inside a HalvesBatch (halves.proto, `translations` and `forwarded`). Pure:
// record_codec calls these for the batch's translation fields; malformed content is a rejected
// record (RecordReject::invalid_content), never a partial batch.
#pragma once

#include <cstdint>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope::v1 {
class HalvesBatch;
}

namespace skewscope::exchange {

// Defined with the record format in record_codec.hpp, which includes this header.
enum class RecordReject : std::uint8_t;

// One translation a router's agent learnt: the initiator's key and the responder's, and when it
// held in the router's wall clock (valid_until_ns 0: not deleted yet when shipped).
struct WireTranslation {
  FlowKey original;
  FlowKey translated;
  std::int64_t valid_from_ns = 0;
  std::int64_t valid_until_ns = 0;
  bool operator==(const WireTranslation&) const = default;
};

inline constexpr std::size_t kMaxTranslationsPerRecord = 1 << 14;

void encode_translations(const std::vector<WireTranslation>& translations, v1::HalvesBatch& pb);
// invalid_content for a tuple without both addresses (16 bytes) and ports (1-65535), a
// translation that changes nothing, a start at or before the epoch, an end before the start, or
// more than kMaxTranslationsPerRecord.
Result<std::vector<WireTranslation>, RecordReject> decode_translations(const v1::HalvesBatch& pb);

}  // namespace skewscope::exchange
