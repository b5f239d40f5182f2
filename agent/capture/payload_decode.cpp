#include "capture/payload_decode.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>

#include "capture/half_decode.hpp"

namespace skewscope {

static_assert(sizeof(skewscope_payload_event) == 72);
static_assert(offsetof(skewscope_payload_event, ts_ns) == 0);
static_assert(offsetof(skewscope_payload_event, cgroup_id) == 8);
static_assert(offsetof(skewscope_payload_event, local_addr) == 16);
static_assert(offsetof(skewscope_payload_event, remote_addr) == 32);
static_assert(offsetof(skewscope_payload_event, local_port) == 48);
static_assert(offsetof(skewscope_payload_event, remote_port) == 50);
static_assert(offsetof(skewscope_payload_event, seq) == 52);
static_assert(offsetof(skewscope_payload_event, bytes) == 56);
static_assert(offsetof(skewscope_payload_event, netns_ino) == 60);
static_assert(offsetof(skewscope_payload_event, captured_len) == 64);
static_assert(offsetof(skewscope_payload_event, kind) == 68);
static_assert(offsetof(skewscope_payload_event, protocol) == 69);
static_assert(sizeof(skewscope_payload_scope_key) == 16);
static_assert(offsetof(skewscope_payload_scope_key, kind) == 8);

const char* payload_reject_name(PayloadReject r) {
  switch (r) {
    case PayloadReject::bad_kind: return "bad_kind";
    case PayloadReject::bad_protocol: return "bad_protocol";
    case PayloadReject::zero_bytes: return "zero_bytes";
    case PayloadReject::zero_port: return "zero_port";
    case PayloadReject::bad_length: return "bad_length";
    case PayloadReject::count_: break;
  }
  return "unknown";
}

DecodedPayload decode_payload(const PayloadRecord& record) {
  const skewscope_payload_event& p = record.header;
  if (p.protocol != SKEWSCOPE_PROTO_KAFKA && p.protocol != SKEWSCOPE_PROTO_ZMTP) {
    return DecodedPayload::fail(PayloadReject::bad_protocol);
  }
  if (p.captured_len > p.bytes || p.captured_len != record.bytes.size()) {
    return DecodedPayload::fail(PayloadReject::bad_length);
  }
  // The identity fields are the half's: decode them exactly as a half is decoded.
  skewscope_half_event e{};
  e.ts_ns = p.ts_ns;
  e.cgroup_id = p.cgroup_id;
  std::copy(std::begin(p.local_addr), std::end(p.local_addr), std::begin(e.local_addr));
  std::copy(std::begin(p.remote_addr), std::end(p.remote_addr), std::begin(e.remote_addr));
  e.local_port = p.local_port;
  e.remote_port = p.remote_port;
  e.seq = p.seq;
  e.bytes = p.bytes;
  e.netns_ino = p.netns_ino;
  e.kind = p.kind;
  Decoded half = decode_half(e);
  if (!half) {
    switch (half.error) {
      case DecodeReject::zero_bytes: return DecodedPayload::fail(PayloadReject::zero_bytes);
      case DecodeReject::zero_port: return DecodedPayload::fail(PayloadReject::zero_port);
      default: return DecodedPayload::fail(PayloadReject::bad_kind);
    }
  }
  PayloadChunk chunk;
  chunk.half = *half;
  chunk.protocol = p.protocol == SKEWSCOPE_PROTO_KAFKA ? PayloadProtocol::kafka : PayloadProtocol::zmtp;
  chunk.netns_ino = p.netns_ino;
  chunk.cgroup_id = p.cgroup_id;
  chunk.prefix = std::span<const std::uint8_t>(record.bytes.data(), record.bytes.size());
  return DecodedPayload::ok(chunk);
}

}  // namespace skewscope
