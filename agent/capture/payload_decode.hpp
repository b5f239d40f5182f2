// Payload record -> the half it belongs to (same key as a TCP half) + its protocol + its bytes.
// Pure: records from a file decode the same way as from the ring buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "capture/payload_source.hpp"
#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

enum class PayloadProtocol : std::uint8_t { kafka, zmtp };

enum class PayloadReject : std::uint8_t { bad_kind, bad_protocol, zero_bytes, zero_port, bad_length, count_ };
const char* payload_reject_name(PayloadReject r);

struct PayloadChunk {
  Half half;  // transport tcp, no domain yet; capture_ns is the half's stamp
  PayloadProtocol protocol = PayloadProtocol::zmtp;
  std::uint32_t netns_ino = 0;
  std::uint64_t cgroup_id = 0;
  std::span<const std::uint8_t> prefix;  // the captured bytes (<= half.bytes); views the record
};

using DecodedPayload = Result<PayloadChunk, PayloadReject>;

DecodedPayload decode_payload(const PayloadRecord& record);

}  // namespace skewscope
