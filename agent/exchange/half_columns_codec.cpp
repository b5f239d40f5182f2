#include "exchange/half_columns_codec.hpp"

#include <unordered_map>

#include "exchange/flow_codec.hpp"
#include "skewscope/address_set.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

constexpr std::uint32_t kMaxTransport = static_cast<std::uint32_t>(Transport::zmtp);

// Head bits (halves.proto, HalfColumns.head): the flow index is above them.
constexpr std::uint32_t kHeadRecv = 1, kHeadDomain = 2, kHeadFlowShift = 2;

// What the previous half of one flow and kind leaves the next one to differ from.
struct StreamState {
  std::uint32_t next_seq = 0;  // its seq + bytes (a TCP stream moves on by what it moved)
  std::uint32_t bytes = 0;
  std::uint32_t domain = 0;  // a socket stays in its namespace
};

// A flow as the columns list it: the socket pair and the transport of its halves.
struct ColumnFlow {
  FlowKey key;
  Transport transport = Transport::tcp;
  bool operator==(const ColumnFlow&) const = default;
};

struct ColumnFlowHash {
  std::size_t operator()(const ColumnFlow& f) const {
    return FlowKeyHash{}(f.key) * 31 + static_cast<std::size_t>(f.transport);
  }
};

std::size_t stream_of(std::uint32_t flow, HalfKind kind) { return 2 * std::size_t{flow} + (kind == HalfKind::recv); }

}  // namespace

void encode_half_columns(const std::vector<WireHalf>& halves, std::int64_t base_realtime_ns, v1::HalfColumns& out) {
  std::unordered_map<Address, std::uint32_t, AddressHash> address_index;
  std::unordered_map<ColumnFlow, std::uint32_t, ColumnFlowHash> flow_index;
  auto address = [&](const Address& a) {
    auto [it, inserted] = address_index.try_emplace(a, static_cast<std::uint32_t>(address_index.size()));
    if (inserted) put_address(out.add_addresses(), a);
    return it->second;
  };
  std::vector<StreamState> streams;
  std::int64_t previous_ns = base_realtime_ns;
  for (const auto& h : halves) {
    auto [it, inserted] =
        flow_index.try_emplace(ColumnFlow{h.flow, h.transport}, static_cast<std::uint32_t>(flow_index.size()));
    if (inserted) {
      out.add_flow_src_addr(address(h.flow.src_addr));
      out.add_flow_dst_addr(address(h.flow.dst_addr));
      out.add_flow_src_port(h.flow.src_port);
      out.add_flow_dst_port(h.flow.dst_port);
      out.add_flow_transport(static_cast<std::uint32_t>(h.transport));
      streams.resize(2 * flow_index.size());
    }
    StreamState& s = streams[stream_of(it->second, h.kind)];
    std::uint32_t head = it->second << kHeadFlowShift | (h.kind == HalfKind::recv ? kHeadRecv : 0);
    if (h.domain != s.domain) {
      head |= kHeadDomain;
      out.add_domain(h.domain);
    }
    out.add_head(head);
    out.add_seq(static_cast<std::int32_t>(h.seq - s.next_seq));  // mod 2^32, as the reader undoes it
    out.add_bytes(static_cast<std::int64_t>(h.bytes) - static_cast<std::int64_t>(s.bytes));
    // Wrapping: the reader adds it back the same way, so any pair of times survives.
    out.add_time(
        static_cast<std::int64_t>(static_cast<std::uint64_t>(h.realtime_ns) - static_cast<std::uint64_t>(previous_ns)));
    s.next_seq = h.seq + h.bytes;
    s.bytes = h.bytes;
    s.domain = h.domain;
    previous_ns = h.realtime_ns;
  }
}

Result<std::vector<WireHalf>, RecordReject> decode_half_columns(const v1::HalfColumns& in, std::size_t domains,
                                                                std::int64_t base_realtime_ns) {
  using Out = Result<std::vector<WireHalf>, RecordReject>;
  const auto bad = [] { return Out::fail(RecordReject::invalid_content); };
  std::vector<Address> addresses(static_cast<std::size_t>(in.addresses_size()));
  for (int i = 0; i < in.addresses_size(); ++i)
    if (!get_address(in.addresses(i), addresses[static_cast<std::size_t>(i)])) return bad();
  const int flows_n = in.flow_src_addr_size();
  if (in.flow_dst_addr_size() != flows_n || in.flow_src_port_size() != flows_n || in.flow_dst_port_size() != flows_n ||
      in.flow_transport_size() != flows_n)
    return bad();
  std::vector<ColumnFlow> flows(static_cast<std::size_t>(flows_n));
  for (int i = 0; i < flows_n; ++i) {
    const std::uint32_t src = in.flow_src_addr(i), dst = in.flow_dst_addr(i);
    if (src >= addresses.size() || dst >= addresses.size() || !valid_port(in.flow_src_port(i)) ||
        !valid_port(in.flow_dst_port(i)) || in.flow_transport(i) > kMaxTransport)
      return bad();
    flows[static_cast<std::size_t>(i)].transport = static_cast<Transport>(in.flow_transport(i));
    FlowKey& k = flows[static_cast<std::size_t>(i)].key;
    k.src_addr = addresses[src];
    k.dst_addr = addresses[dst];
    k.src_port = static_cast<std::uint16_t>(in.flow_src_port(i));
    k.dst_port = static_cast<std::uint16_t>(in.flow_dst_port(i));
  }
  const int n = in.head_size();
  if (static_cast<std::size_t>(n) > kMaxHalvesPerRecord || in.seq_size() != n || in.bytes_size() != n ||
      in.time_size() != n || in.domain_size() > n)
    return bad();
  int next_domain = 0;  // the next unread entry of `domain`
  std::vector<StreamState> streams(2 * flows.size());
  std::vector<WireHalf> out;
  out.reserve(static_cast<std::size_t>(n));
  auto previous_ns = static_cast<std::uint64_t>(base_realtime_ns);
  for (int i = 0; i < n; ++i) {
    const std::uint32_t head = in.head(i), flow = head >> kHeadFlowShift;
    if (flow >= flows.size()) return bad();
    WireHalf w;
    w.kind = (head & kHeadRecv) ? HalfKind::recv : HalfKind::send;
    StreamState& s = streams[stream_of(flow, w.kind)];
    if (head & kHeadDomain) {
      if (next_domain == in.domain_size() || in.domain(next_domain) >= domains) return bad();
      s.domain = in.domain(next_domain++);
    }
    if (s.domain >= domains) return bad();  // domain 0 of a record that names no domain
    w.transport = flows[flow].transport;
    w.flow = flows[flow].key;
    w.domain = s.domain;
    // The size must come out in 1..2^32-1; the delta is checked before it is added (no overflow).
    const std::int64_t delta = in.bytes(i), last = s.bytes;
    if (delta <= -last || delta > std::int64_t{0xffffffff} - last) return bad();
    w.bytes = static_cast<std::uint32_t>(last + delta);
    w.seq = s.next_seq + static_cast<std::uint32_t>(in.seq(i));
    previous_ns += static_cast<std::uint64_t>(in.time(i));
    w.realtime_ns = static_cast<std::int64_t>(previous_ns);
    s.next_seq = w.seq + w.bytes;
    s.bytes = w.bytes;
    out.push_back(w);
  }
  if (next_domain != in.domain_size()) return bad();  // changes no head announced
  return Out::ok(std::move(out));
}

}  // namespace skewscope::exchange
