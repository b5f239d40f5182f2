// AgentCore's RDMA path: records of the rdma_verbs capture -> domain + clock -> RdmaPairing ->
// the same health, estimator and recent spans as TCP (transport "rdma").
#include <cstddef>

#include "core/agent_core.hpp"

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

void AgentCore::ingest_rdma(const std::vector<skewscope_rdma_event>& batch) {
  spans_.clear();
  for (const auto& e : batch) {
    if (e.kind == SKEWSCOPE_RDMA_CONTEXT) continue;  // for the capture's discovery only
    auto domain = domains_.classify(e.netns_ino, e.cgroup_id);
    if (!domain) {
      ++rdma_outside_domains_;
      continue;
    }
    const RdmaEndpoint local{*domain, e.pid, e.qpn};
    switch (e.kind) {
      case SKEWSCOPE_RDMA_CONNECT: {
        RdmaConnection c;
        c.peer_qpn = e.peer_qpn;
        std::copy(std::begin(e.gid), std::end(e.gid), c.peer_gid.begin());
        if (e.local_gid_known) {
          c.local_gid.emplace();
          std::copy(std::begin(e.local_gid), std::end(e.local_gid), c.local_gid->begin());
        }
        c.generation = e.ts_ns;
        rdma_.connect(local, c, e.opcode != 0);
        break;
      }
      case SKEWSCOPE_RDMA_QP_CREATED: rdma_.qp_created(local); break;
      case SKEWSCOPE_RDMA_SEND:
      case SKEWSCOPE_RDMA_RECV: {
        RdmaHalf half;
        half.kind = e.kind == SKEWSCOPE_RDMA_SEND ? HalfKind::send : HalfKind::recv;
        half.local = local;
        half.ordinal = e.ordinal;
        half.bytes = e.bytes;
        half.capture_ns = static_cast<std::int64_t>(e.ts_ns);
        half.domain_ns = simulated_.apply(*domain, half.capture_ns, clock_mapping_.to_realtime(half.capture_ns));
        if (exchange_ && ship_rdma(half)) break;
        rdma_.add(half, spans_);
        break;
      }
      default: break;  // an unknown kind from a newer kernel side: nothing to pair
    }
  }
  add_spans_to_health();
}

bool AgentCore::ship_rdma(const RdmaHalf& half) {
  // Local when the peer's GID is an address of one of this agent's domains (on RoCEv2 a GID is
  // the port's IP address); otherwise the owner of the host pair "min|max" of the two GIDs pairs
  // it. A half whose connection is unknown stays here (counted as no_connection).
  const RdmaConnection* c = rdma_.connection(half.local);
  if (!c || exchange_->owns(c->peer_gid)) return false;
  if (!c->local_gid) {
    ++rdma_no_local_gid_;  // no key to ship it by: dropped, counted
    return true;
  }
  exchange::OutgoingRdmaHalf out;
  out.wire = exchange::WireRdmaHalf{half.kind,   *c->local_gid,  c->peer_gid,      half.local.qpn,
                                    c->peer_qpn, half.local.pid, c->generation,    half.ordinal,
                                    half.bytes,  half.domain_ns, half.local.domain};
  out.capture_ns = half.capture_ns;
  out.clock_error_ns = half.domain_ns - clock_mapping_.to_realtime(half.capture_ns);
  exchange_->ship_rdma(out);
  return true;
}

void AgentCore::take_outgoing_rdma(std::vector<exchange::OutgoingRdmaHalf>& out) {
  if (exchange_) {
    exchange_->take_outgoing_rdma(out);
  } else {
    out.clear();
  }
}

}  // namespace skewscope
