// The owner's side of RDMA halves: the same RdmaPairing as on one host, one table per host pair
// of each owned partition. A remote half brings its connection (its sender's RTR), so the owner
// learns connections from the halves themselves; a new RTR on an endpoint retires its waiting
// halves exactly as a local CONNECT does.
#include "exchange/remote_pairing.hpp"

namespace skewscope::exchange {
namespace {

void add_counters(RdmaPairingCounters& to, const RdmaPairingCounters& c) {
  to.sends += c.sends;
  to.recvs += c.recvs;
  to.pairs += c.pairs;
  to.connects += c.connects;
  to.untracked_connects += c.untracked_connects;
  to.no_connection += c.no_connection;
  to.sends_expired += c.sends_expired;
  to.recvs_expired += c.recvs_expired;
  to.superseded += c.superseded;
  to.duplicates += c.duplicates;
  to.dropped_table_full += c.dropped_table_full;
}

}  // namespace

void RemotePairing::ingest_rdma(Partition& part, const WireBatch& batch, std::int64_t now_ns) {
  // Remote halves age by their arrival here; a receive may wait as long as a send, since its
  // send crosses the exchange too.
  const RdmaPairingLimits limits{limits_.max_pending, limits_.send_max_age_ns, limits_.send_max_age_ns, 1 << 16};
  for (const WireRdmaHalf& w : batch.rdma_halves) {
    const std::optional<DomainId> known = consume_domain(part, w.domain, now_ns);
    if (!known) continue;
    const DomainId domain = *known;
    const auto host_pair = std::minmax(w.local_gid, w.peer_gid);
    auto table = part.rdma.find(host_pair);
    if (table == part.rdma.end()) {
      if (part.rdma.size() >= kMaxRdmaHostPairs) {
        ++dropped_[static_cast<std::size_t>(DropReason::pending_full)];
        part.last_loss_ns = now_ns;
        continue;
      }
      table = part.rdma.try_emplace(host_pair, limits).first;
    }
    RdmaPairing& pairing = table->second;
    const RdmaEndpoint local{domain, w.pid, w.local_qpn};
    pairing.connect_if_new(local, RdmaConnection{w.peer_qpn, w.peer_gid, w.local_gid, w.generation});
    RdmaHalf h;
    h.kind = w.kind;
    h.local = local;
    h.ordinal = w.ordinal;
    h.bytes = w.bytes;
    h.capture_ns = now_ns;  // ages by arrival on this host, as TCP halves
    h.domain_ns = w.realtime_ns;
    const auto full_before = pairing.counters().dropped_table_full;
    pairing.add(h, spans_);
    if (pairing.counters().dropped_table_full != full_before) {
      ++dropped_[static_cast<std::size_t>(DropReason::pending_full)];
      part.last_loss_ns = now_ns;
    }
  }
}

void RemotePairing::revoke_rdma(const Partition& part) {
  for (const auto& [_, pairing] : part.rdma) {
    dropped_[static_cast<std::size_t>(DropReason::partition_revoked)] +=
        pairing.pending_sends() + pairing.pending_recvs();
    add_counters(rdma_revoked_, pairing.counters());
  }
}

RdmaPairingCounters RemotePairing::rdma_counters() const {
  RdmaPairingCounters total = rdma_revoked_;
  for (const auto& [_, part] : partitions_)
    for (const auto& [__, pairing] : part.rdma) add_counters(total, pairing.counters());
  return total;
}

}  // namespace skewscope::exchange
