// AgentCore's RDMA path: records of the rdma_verbs capture -> domain + clock -> RdmaPairing ->
// the same health, estimator and recent spans as TCP (transport "rdma").
#include <cstddef>

#include "cli/agent_core.hpp"

namespace skewscope {

static_assert(sizeof(skewscope_rdma_event) == 120);
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
        Address gid;
        std::copy(std::begin(e.gid), std::end(e.gid), gid.begin());
        rdma_.connect(local, e.peer_qpn, gid, e.opcode != 0);
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
        rdma_.add(half, spans_);
        break;
      }
      default: break;  // an unknown kind from a newer kernel side: nothing to pair
    }
  }
  add_spans_to_health();
}

}  // namespace skewscope
