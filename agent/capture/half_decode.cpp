#include "capture/half_decode.hpp"

#include <algorithm>
#include <cstddef>

namespace skewscope {

static_assert(sizeof(skewscope_half_event) == 96);
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
static_assert(offsetof(skewscope_half_event, comm) == 80);

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
  Decoded out;
  if (e.kind != SKEWSCOPE_HALF_SEND && e.kind != SKEWSCOPE_HALF_RECV) {
    out.reject = DecodeReject::bad_kind;
    return out;
  }
  if (e.bytes == 0) {
    out.reject = DecodeReject::zero_bytes;
    return out;
  }
  // A socket with no peer port is not connected: its bytes cannot belong to a flow.
  if (e.local_port == 0 || e.remote_port == 0) {
    out.reject = DecodeReject::zero_port;
    return out;
  }
  Half h;
  h.kind = e.kind == SKEWSCOPE_HALF_SEND ? HalfKind::send : HalfKind::recv;
  h.transport = Transport::tcp;
  Address local, remote;
  std::copy(std::begin(e.local_addr), std::end(e.local_addr), local.begin());
  std::copy(std::begin(e.remote_addr), std::end(e.remote_addr), remote.begin());
  if (h.kind == HalfKind::send) {
    h.flow = FlowKey{local, remote, e.local_port, e.remote_port};
  } else {
    h.flow = FlowKey{remote, local, e.remote_port, e.local_port};
  }
  h.seq = e.seq;
  h.bytes = e.bytes;
  h.capture_ns = static_cast<std::int64_t>(e.ts_ns);
  out.half = h;
  return out;
}

}  // namespace skewscope
