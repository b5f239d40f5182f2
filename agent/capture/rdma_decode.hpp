// RDMA verbs records (bpf/rdma_verbs.bpf.c) -> what the pairing needs from each: a QP's
// connection (its peer at RTR), a QP created, or one message half. Pure, like half_decode and
// wire_decode: which domain a record belongs to and its wall-clock time are the later stages'.
#pragma once

#include <cstdint>
#include <optional>

#include "skewscope/abi/rdma_event.h"
#include "skewscope/half.hpp"

namespace skewscope {

enum class RdmaRecordKind : std::uint8_t {
  connect,     // ibv_modify_qp to RTR: the peer's QPN and GID
  qp_created,  // ordinals of this QPN restart
  send,
  recv,
  discovery,  // the provider's functions, for the capture only: not the pairing's, not classified
  other,      // a kind the pairing does not use (extended CQs, clock samples, a newer kernel side)
};

struct RdmaRecord {
  RdmaRecordKind kind = RdmaRecordKind::other;
  // Where it came from, for the domains stage.
  std::uint32_t netns_ino = 0;
  std::uint64_t cgroup_id = 0;
  std::uint32_t pid = 0;
  std::uint32_t qpn = 0;
  std::int64_t capture_ns = 0;  // CLOCK_MONOTONIC (a RECV's NIC stamp already mapped by the capture)
  // connect
  std::uint32_t peer_qpn = 0;
  Address peer_gid{};
  std::optional<Address> local_gid;  // resolved by the capture from the GID table, when it could
  bool tracked = false;              // the QP's provider functions were probed at RTR
  // send, recv
  std::uint64_t ordinal = 0;
  std::uint32_t bytes = 0;
};

RdmaRecord decode_rdma(const skewscope_rdma_event& e);

}  // namespace skewscope
