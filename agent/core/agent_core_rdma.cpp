// AgentCore's RDMA path: records of the rdma_verbs capture -> domain + clock -> RdmaPairing ->
// the same health, estimator and recent spans as TCP (transport "rdma").
#include "capture/rdma_decode.hpp"
#include "core/agent_core.hpp"

namespace skewscope {

void AgentCore::ingest_rdma(const std::vector<skewscope_rdma_event>& batch) {
  spans_.clear();
  for (const auto& e : batch) {
    const RdmaRecord r = decode_rdma(e);
    if (r.kind == RdmaRecordKind::discovery) continue;  // for the capture's discovery only
    auto domain = domains_.classify(r.netns_ino, r.cgroup_id);
    if (!domain) {
      ++rdma_outside_domains_;
      continue;
    }
    const RdmaEndpoint local{*domain, r.pid, r.qpn};
    switch (r.kind) {
      case RdmaRecordKind::connect: {
        RdmaConnection c;
        c.peer_qpn = r.peer_qpn;
        c.peer_gid = r.peer_gid;
        c.local_gid = r.local_gid;
        c.generation = static_cast<std::uint64_t>(r.capture_ns);
        rdma_.connect(local, c, r.tracked);
        break;
      }
      case RdmaRecordKind::qp_created: rdma_.qp_created(local); break;
      case RdmaRecordKind::send:
      case RdmaRecordKind::recv: {
        RdmaHalf half;
        half.kind = r.kind == RdmaRecordKind::send ? HalfKind::send : HalfKind::recv;
        half.local = local;
        half.ordinal = r.ordinal;
        half.bytes = r.bytes;
        half.capture_ns = r.capture_ns;
        half.domain_ns = simulated_.apply(*domain, half.capture_ns, clock_mapping_.to_realtime(half.capture_ns));
        if (exchange_ && ship_rdma(half)) break;
        rdma_.add(half, spans_);
        break;
      }
      default: break;  // a kind the pairing does not use: nothing to pair
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
