#include "exchange/rdma_record_codec.hpp"

#include <cstring>
#include <map>
#include <tuple>

#include "exchange/record_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

bool get_gid(const std::string& in, Address& a) {
  if (in.size() != a.size()) return false;
  std::memcpy(a.data(), in.data(), a.size());
  return true;
}

}  // namespace

void encode_rdma_halves(const std::vector<WireRdmaHalf>& halves, std::int64_t base_realtime_ns, v1::HalvesBatch& pb) {
  // A record holds one host pair: a few connections, many halves each.
  using ConnKey = std::tuple<Address, Address, std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>;
  std::map<ConnKey, std::uint32_t> index;
  for (const auto& h : halves) {
    const ConnKey key{h.local_gid, h.peer_gid, h.local_qpn, h.peer_qpn, h.pid, h.generation};
    auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(index.size()));
    if (inserted) {
      v1::RdmaConnection* c = pb.add_rdma_connections();
      c->set_local_gid(reinterpret_cast<const char*>(h.local_gid.data()), h.local_gid.size());
      c->set_peer_gid(reinterpret_cast<const char*>(h.peer_gid.data()), h.peer_gid.size());
      c->set_local_qpn(h.local_qpn);
      c->set_peer_qpn(h.peer_qpn);
      c->set_pid(h.pid);
      c->set_generation(h.generation);
    }
    v1::RdmaHalf* out = pb.add_rdma_halves();
    out->set_kind(h.kind == HalfKind::send ? v1::RdmaHalf::SEND : v1::RdmaHalf::RECV);
    out->set_connection(it->second);
    out->set_domain(h.domain);
    out->set_ordinal(h.ordinal);
    out->set_bytes(h.bytes);
    out->set_realtime_delta_ns(h.realtime_ns - base_realtime_ns);
  }
}

Result<std::vector<WireRdmaHalf>, RecordReject> decode_rdma_halves(const v1::HalvesBatch& pb, std::size_t domains) {
  using Decoded = Result<std::vector<WireRdmaHalf>, RecordReject>;
  // Each connection is there for its halves: more connections than halves is not ours.
  if (pb.rdma_connections_size() > pb.rdma_halves_size()) return Decoded::fail(RecordReject::invalid_content);
  std::vector<WireRdmaHalf> conns;
  conns.reserve(static_cast<std::size_t>(pb.rdma_connections_size()));
  for (const auto& c : pb.rdma_connections()) {
    WireRdmaHalf w;
    if (!get_gid(c.local_gid(), w.local_gid) || !get_gid(c.peer_gid(), w.peer_gid) || c.local_qpn() > kMaxQpn ||
        c.peer_qpn() > kMaxQpn)
      return Decoded::fail(RecordReject::invalid_content);
    w.local_qpn = c.local_qpn();
    w.peer_qpn = c.peer_qpn();
    w.pid = c.pid();
    w.generation = c.generation();
    conns.push_back(w);
  }
  std::vector<WireRdmaHalf> out;
  out.reserve(static_cast<std::size_t>(pb.rdma_halves_size()));
  for (const auto& h : pb.rdma_halves()) {
    if ((h.kind() != v1::RdmaHalf::SEND && h.kind() != v1::RdmaHalf::RECV) || h.connection() >= conns.size() ||
        h.domain() >= domains)  // a zero-length SEND is legal in RDMA
      return Decoded::fail(RecordReject::invalid_content);
    WireRdmaHalf w = conns[h.connection()];
    w.kind = h.kind() == v1::RdmaHalf::SEND ? HalfKind::send : HalfKind::recv;
    w.domain = h.domain();
    w.ordinal = h.ordinal();
    w.bytes = h.bytes();
    // Wrapping arithmetic, as record_codec: a hostile delta must not be undefined behaviour.
    w.realtime_ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(pb.base_realtime_ns()) +
                                              static_cast<std::uint64_t>(h.realtime_delta_ns()));
    out.push_back(w);
  }
  return Decoded::ok(std::move(out));
}

}  // namespace skewscope::exchange
