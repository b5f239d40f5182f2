#include "capture/wire_decode.hpp"

#include <cstddef>
#include <cstring>

namespace skewscope {

static_assert(sizeof(skewscope_wire_event) == 88);
static_assert(offsetof(skewscope_wire_event, mono_ns) == 0);
static_assert(offsetof(skewscope_wire_event, skb_real_ns) == 8);
static_assert(offsetof(skewscope_wire_event, hw_ns) == 16);
static_assert(offsetof(skewscope_wire_event, cgroup_id) == 24);
static_assert(offsetof(skewscope_wire_event, local_addr) == 32);
static_assert(offsetof(skewscope_wire_event, remote_addr) == 48);
static_assert(offsetof(skewscope_wire_event, local_port) == 64);
static_assert(offsetof(skewscope_wire_event, remote_port) == 66);
static_assert(offsetof(skewscope_wire_event, seq) == 68);
static_assert(offsetof(skewscope_wire_event, bytes) == 72);
static_assert(offsetof(skewscope_wire_event, netns_ino) == 76);
static_assert(offsetof(skewscope_wire_event, ifindex) == 80);
static_assert(offsetof(skewscope_wire_event, direction) == 84);
static_assert(offsetof(skewscope_wire_event, origin) == 85);

const char* wire_reject_name(WireReject r) {
  switch (r) {
    case WireReject::bad_direction: return "bad_direction";
    case WireReject::no_port: return "no_port";
    case WireReject::no_bytes: return "no_bytes";
    case WireReject::count_: break;
  }
  return "unknown";
}

WireDecoded decode_wire(const skewscope_wire_event& e) {
  if (e.direction != SKEWSCOPE_WIRE_EGRESS && e.direction != SKEWSCOPE_WIRE_INGRESS) {
    return WireDecoded::fail(WireReject::bad_direction);
  }
  if (e.local_port == 0 || e.remote_port == 0) {
    return WireDecoded::fail(WireReject::no_port);
  }
  if (e.bytes == 0) {
    return WireDecoded::fail(WireReject::no_bytes);
  }
  WireHalf w;
  Half& h = w.half;
  // Directed like a syscall half: an egress segment goes local -> remote (a send), an ingress
  // segment remote -> local (a receive), so both ends of one segment compute one key.
  const bool egress = e.direction == SKEWSCOPE_WIRE_EGRESS;
  h.kind = egress ? HalfKind::send : HalfKind::recv;
  std::memcpy((egress ? h.flow.src_addr : h.flow.dst_addr).data(), e.local_addr, 16);
  std::memcpy((egress ? h.flow.dst_addr : h.flow.src_addr).data(), e.remote_addr, 16);
  h.flow.src_port = egress ? e.local_port : e.remote_port;
  h.flow.dst_port = egress ? e.remote_port : e.local_port;
  h.seq = e.seq;
  h.bytes = e.bytes;
  h.capture_ns = static_cast<std::int64_t>(e.mono_ns);
  if (e.skb_real_ns) w.skb_realtime_ns = static_cast<std::int64_t>(e.skb_real_ns);
  if (e.hw_ns) w.hardware_ns = static_cast<std::int64_t>(e.hw_ns);
  w.netns_ino = e.netns_ino;
  w.ifindex = e.ifindex;
  w.hardware_only = e.origin == SKEWSCOPE_WIRE_FROM_SOCKOPS_HW;
  w.ack_sample = e.origin == SKEWSCOPE_WIRE_FROM_TC_ACK;
  return WireDecoded::ok(w);
}

}  // namespace skewscope
