#include "capture/half_decode.hpp"

#include <cstddef>
#include <cstring>

namespace skewscope {

static_assert(sizeof(skewscope_half_event) == 80);
static_assert(offsetof(skewscope_half_event, ts_ns) == 0);
static_assert(offsetof(skewscope_half_event, cgroup_id) == 8);
static_assert(offsetof(skewscope_half_event, local_addr) == 16);
static_assert(offsetof(skewscope_half_event, remote_addr) == 32);
static_assert(offsetof(skewscope_half_event, local_port) == 48);
static_assert(offsetof(skewscope_half_event, remote_port) == 50);
static_assert(offsetof(skewscope_half_event, seq) == 52);
static_assert(offsetof(skewscope_half_event, bytes) == 56);
static_assert(offsetof(skewscope_half_event, netns_ino) == 60);
static_assert(offsetof(skewscope_half_event, pid) == 64);
static_assert(offsetof(skewscope_half_event, tid) == 68);
static_assert(offsetof(skewscope_half_event, kind) == 72);
static_assert(offsetof(skewscope_half_event, syscall) == 73);
static_assert(offsetof(skewscope_half_event, pad) == 74);
static_assert(sizeof(Address) == sizeof(skewscope_half_event::local_addr));

const char* decode_reject_name(DecodeReject r) {
  switch (r) {
    case DecodeReject::bad_kind: return "bad_kind";
    case DecodeReject::zero_bytes: return "zero_bytes";
    case DecodeReject::zero_port: return "zero_port";
    case DecodeReject::count_: break;
  }
  return "unknown";
}

Decoded decode_half(const skewscope_half_event& e) {
  if (e.kind != SKEWSCOPE_HALF_SEND && e.kind != SKEWSCOPE_HALF_RECV) {
    return Decoded::fail(DecodeReject::bad_kind);
  }
  if (e.bytes == 0) {
    return Decoded::fail(DecodeReject::zero_bytes);
  }
  // A socket with no peer port is not connected: its bytes cannot belong to a flow.
  if (e.local_port == 0 || e.remote_port == 0) {
    return Decoded::fail(DecodeReject::zero_port);
  }
  // Built in place in the result, the addresses by fixed-size copies the compiler inlines (a
  // std::copy of two byte arrays became two memmove calls per half: the agent's top symbol).
  Decoded out;
  out.value.emplace();
  Half& h = *out.value;
  h.kind = e.kind == SKEWSCOPE_HALF_SEND ? HalfKind::send : HalfKind::recv;
  h.transport = Transport::tcp;
  const bool send = h.kind == HalfKind::send;
  std::memcpy(h.flow.src_addr.data(), send ? e.local_addr : e.remote_addr, sizeof e.local_addr);
  std::memcpy(h.flow.dst_addr.data(), send ? e.remote_addr : e.local_addr, sizeof e.local_addr);
  h.flow.src_port = send ? e.local_port : e.remote_port;
  h.flow.dst_port = send ? e.remote_port : e.local_port;
  h.seq = e.seq;
  h.bytes = e.bytes;
  h.capture_ns = static_cast<std::int64_t>(e.ts_ns);
  return out;
}

}  // namespace skewscope
