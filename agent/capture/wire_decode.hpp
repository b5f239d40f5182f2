// Wire-level records (tc ingress/egress) -> halves the correlator pairs, with every stamp the
// record carries. Pure: no clock is read here, the caller maps the stamps to its domain's time.
#pragma once

#include <cstdint>
#include <optional>

#include "skewscope/abi/wire_event.h"
#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

enum class WireReject : std::uint8_t { bad_direction, no_port, no_bytes, count_ };
const char* wire_reject_name(WireReject r);

struct WireHalf {
  Half half;  // kind, flow (directed like a syscall half), seq, bytes, capture_ns = program time
  // The kernel's receive stamp (CLOCK_REALTIME), when the segment carried one (ingress only).
  std::optional<std::int64_t> skb_realtime_ns;
  std::optional<std::int64_t> hardware_ns;  // NIC PHC timescale
  std::uint32_t netns_ino = 0;
  std::uint32_t ifindex = 0;
  // sock_ops hardware stamp: the same byte's software half came separately, so this one counts
  // at the hardware level only.
  bool hardware_only = false;
  // A pure ACK (--wire-ack-samples): seq is its acknowledgement number, bytes 1. Its "send" is
  // where the data's receiver sent it, its "receive" where the data's sender got it back.
  bool ack_sample = false;
};

using WireDecoded = Result<WireHalf, WireReject>;

WireDecoded decode_wire(const skewscope_wire_event& e);

}  // namespace skewscope
