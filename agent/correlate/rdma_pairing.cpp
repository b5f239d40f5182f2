#include "correlate/rdma_pairing.hpp"

namespace skewscope {

void RdmaPairing::retire(const RdmaEndpoint& local) {
  // A waiting half belongs to `local` when it was captured there: sends keyed by its QPN as the
  // sender, receives by its QPN as the receiver. Rare (one per RTR), so a scan is fine.
  auto drop = [&](std::map<Key, Waiting>& table) {
    for (auto it = table.begin(); it != table.end();) {
      if (it->second.half.local == local) {
        ++counters_.superseded;
        it = table.erase(it);
      } else {
        ++it;
      }
    }
  };
  drop(sends_);
  drop(recvs_);
}

void RdmaPairing::connect(const RdmaEndpoint& local, std::uint32_t peer_qpn, const Address& peer_gid, bool tracked) {
  connect(local, RdmaConnection{peer_qpn, peer_gid, std::nullopt, 0}, tracked);
}

void RdmaPairing::connect_if_new(const RdmaEndpoint& local, const RdmaConnection& connection) {
  auto it = connections_.find(local);
  if (it != connections_.end() && it->second.generation == connection.generation &&
      it->second.peer_qpn == connection.peer_qpn && it->second.peer_gid == connection.peer_gid)
    return;
  connect(local, connection, true);
}

const RdmaConnection* RdmaPairing::connection(const RdmaEndpoint& local) const {
  auto it = connections_.find(local);
  return it == connections_.end() ? nullptr : &it->second;
}

void RdmaPairing::connect(const RdmaEndpoint& local, const RdmaConnection& connection, bool tracked) {
  ++counters_.connects;
  retire(local);
  if (!tracked) {
    ++counters_.untracked_connects;
    connections_.erase(local);
    return;
  }
  if (!connections_.contains(local) && connections_.size() >= limits_.max_connections) {
    ++counters_.dropped_table_full;
    return;
  }
  connections_[local] = connection;
}

void RdmaPairing::qp_created(const RdmaEndpoint& local) {
  retire(local);
  connections_.erase(local);
}

const Address* RdmaPairing::peer_gid(const RdmaEndpoint& local) const {
  auto it = connections_.find(local);
  return it == connections_.end() ? nullptr : &it->second.peer_gid;
}

void RdmaPairing::emit(const RdmaHalf& send, const RdmaHalf& recv, std::vector<Span>& out) {
  Span span;
  span.src = send.local.domain;
  span.dst = recv.local.domain;
  span.transport = Transport::rdma;
  span.send_ns = send.domain_ns;
  span.recv_ns = recv.domain_ns;
  span.capture_ns = recv.capture_ns;
  span.bytes = send.bytes;
  out.push_back(span);
  ++counters_.pairs;
}

void RdmaPairing::add(const RdmaHalf& half, std::vector<Span>& out) {
  const bool is_send = half.kind == HalfKind::send;
  ++(is_send ? counters_.sends : counters_.recvs);
  auto conn = connections_.find(half.local);
  if (conn == connections_.end()) {
    ++counters_.no_connection;
    return;
  }
  const Key key = is_send ? Key{half.local.qpn, conn->second.peer_qpn, half.ordinal}
                          : Key{conn->second.peer_qpn, half.local.qpn, half.ordinal};
  auto& other = is_send ? recvs_ : sends_;
  if (auto match = other.find(key); match != other.end()) {
    if (is_send) {
      emit(half, match->second.half, out);
    } else {
      emit(match->second.half, half, out);
    }
    other.erase(match);
    return;
  }
  auto& mine = is_send ? sends_ : recvs_;
  if (auto existing = mine.find(key); existing != mine.end()) {
    ++counters_.duplicates;
    existing->second.half = half;
    return;
  }
  if (sends_.size() + recvs_.size() >= limits_.max_pending) {
    ++counters_.dropped_table_full;
    return;
  }
  mine.emplace(key, Waiting{half});
}

void RdmaPairing::expire(std::int64_t now_ns) {
  auto age = [&](std::map<Key, Waiting>& table, std::int64_t max_age, std::uint64_t& counter) {
    for (auto it = table.begin(); it != table.end();) {
      if (now_ns - it->second.half.capture_ns > max_age) {
        ++counter;
        it = table.erase(it);
      } else {
        ++it;
      }
    }
  };
  age(sends_, limits_.send_max_age_ns, counters_.sends_expired);
  age(recvs_, limits_.recv_max_age_ns, counters_.recvs_expired);
}

}  // namespace skewscope
