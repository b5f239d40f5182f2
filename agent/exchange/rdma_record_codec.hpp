// RDMA halves inside a HalvesBatch (proto/skewscope/v1/rdma_halves.proto). Pure: record_codec
// calls these for the batch's RDMA fields; malformed content is a rejected record
// (RecordReject::invalid_content), never a partial batch.
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

// One RC half as shipped: its connection (both GIDs and QPNs, the RTR it belongs to), ordinal,
// size, and the domain clock's wall-clock reading.
struct WireRdmaHalf {
  HalfKind kind = HalfKind::send;
  Address local_gid{};
  Address peer_gid{};
  std::uint32_t local_qpn = 0;
  std::uint32_t peer_qpn = 0;
  std::uint32_t pid = 0;
  std::uint64_t generation = 0;
  std::uint64_t ordinal = 0;
  std::uint32_t bytes = 0;
  std::int64_t realtime_ns = 0;
  std::uint32_t domain = 0;  // index into WireBatch::domains (the local DomainId before batching)
  bool operator==(const WireRdmaHalf&) const = default;
};

inline constexpr std::uint32_t kMaxQpn = 0xffffff;  // QPNs are 24 bits

// Connections are written once each; deltas are from `base_realtime_ns`.
void encode_rdma_halves(const std::vector<WireRdmaHalf>& halves, std::int64_t base_realtime_ns, v1::HalvesBatch& pb);
// The batch's RDMA halves; invalid_content when a half or connection is out of range (index, GID
// length, QPN, kind, domain index).
Result<std::vector<WireRdmaHalf>, RecordReject> decode_rdma_halves(const v1::HalvesBatch& pb, std::size_t domains);

}  // namespace skewscope::exchange
