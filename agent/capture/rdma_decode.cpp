#include "capture/rdma_decode.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace skewscope {

static_assert(sizeof(skewscope_rdma_event) == 280);  // the fields past 208: capture/rdma_capture_ex.cpp
static_assert(offsetof(skewscope_rdma_event, ts_ns) == 0);
static_assert(offsetof(skewscope_rdma_event, cgroup_id) == 8);
static_assert(offsetof(skewscope_rdma_event, wr_id) == 16);
static_assert(offsetof(skewscope_rdma_event, ordinal) == 24);
static_assert(offsetof(skewscope_rdma_event, fn) == 32);
static_assert(offsetof(skewscope_rdma_event, gid) == 56);
static_assert(offsetof(skewscope_rdma_event, pid) == 72);
static_assert(offsetof(skewscope_rdma_event, tid) == 76);
static_assert(offsetof(skewscope_rdma_event, netns_ino) == 80);
static_assert(offsetof(skewscope_rdma_event, qpn) == 84);
static_assert(offsetof(skewscope_rdma_event, peer_qpn) == 88);
static_assert(offsetof(skewscope_rdma_event, bytes) == 92);
static_assert(offsetof(skewscope_rdma_event, kind) == 96);
static_assert(offsetof(skewscope_rdma_event, opcode) == 97);
static_assert(offsetof(skewscope_rdma_event, ts_source) == 98);
static_assert(offsetof(skewscope_rdma_event, comm) == 104);
static_assert(offsetof(skewscope_rdma_event, sgid_index) == 120);
static_assert(offsetof(skewscope_rdma_event, port_num) == 121);
static_assert(offsetof(skewscope_rdma_event, local_gid_known) == 122);
static_assert(offsetof(skewscope_rdma_event, local_gid) == 128);
static_assert(offsetof(skewscope_rdma_event, device) == 144);

namespace {

RdmaRecordKind kind_of(std::uint8_t kind) {
  switch (kind) {
    case SKEWSCOPE_RDMA_CONNECT: return RdmaRecordKind::connect;
    case SKEWSCOPE_RDMA_QP_CREATED: return RdmaRecordKind::qp_created;
    case SKEWSCOPE_RDMA_SEND: return RdmaRecordKind::send;
    case SKEWSCOPE_RDMA_RECV: return RdmaRecordKind::recv;
    case SKEWSCOPE_RDMA_CONTEXT: return RdmaRecordKind::discovery;
    default: return RdmaRecordKind::other;
  }
}

}  // namespace

RdmaRecord decode_rdma(const skewscope_rdma_event& e) {
  RdmaRecord r;
  r.kind = kind_of(e.kind);
  r.netns_ino = e.netns_ino;
  r.cgroup_id = e.cgroup_id;
  r.pid = e.pid;
  r.qpn = e.qpn;
  r.capture_ns = static_cast<std::int64_t>(e.ts_ns);
  if (r.kind == RdmaRecordKind::connect) {
    r.peer_qpn = e.peer_qpn;
    std::copy(std::begin(e.gid), std::end(e.gid), r.peer_gid.begin());
    if (e.local_gid_known) {
      r.local_gid.emplace();
      std::copy(std::begin(e.local_gid), std::end(e.local_gid), r.local_gid->begin());
    }
    r.tracked = e.opcode != 0;  // CONNECT's opcode says whether the QP is tracked
  }
  if (r.kind == RdmaRecordKind::send || r.kind == RdmaRecordKind::recv) {
    r.ordinal = e.ordinal;
    r.bytes = e.bytes;
  }
  return r;
}

}  // namespace skewscope
