#include "exchange/record_codec.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "domains/domain_spec.hpp"
#include "exchange/message_record_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

constexpr std::uint8_t kMagic0 = 'S';
constexpr std::uint8_t kMagic1 = 'K';

void put_address(std::string* out, const Address& a) { out->assign(reinterpret_cast<const char*>(a.data()), a.size()); }

bool get_address(const std::string& in, Address& a) {
  if (in.size() != a.size()) return false;
  std::memcpy(a.data(), in.data(), a.size());
  return true;
}

DecodedRecord reject(RecordReject r) { return DecodedRecord{std::nullopt, r}; }

// libprotobuf logs every invalid string it parses to stderr: a hostile producer could flood the
// agent's log. Rejections are counted instead, so its log lines are dropped.
void quiet_protobuf() {
  static const bool once = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)once;
}

}  // namespace

std::string encode_record(const WireBatch& batch) {
  v1::HalvesBatch pb;
  pb.set_host(batch.host);
  for (const auto& d : batch.domains) pb.add_domains(d);
  pb.mutable_clock()->set_error_bound_ns(batch.clock_error_bound_ns);
  pb.mutable_clock()->set_status(batch.clock_status);
  pb.set_dropped_before(batch.dropped_before);
  const std::int64_t base = !batch.halves.empty()        ? batch.halves.front().realtime_ns
                            : !batch.rdma_halves.empty() ? batch.rdma_halves.front().realtime_ns
                                                         : 0;
  pb.set_base_realtime_ns(base);
  // A batch holds one host pair: a few flows, many halves each. Addresses go once per flow.
  std::unordered_map<FlowKey, std::uint32_t, FlowKeyHash> flow_index;
  for (const auto& h : batch.halves) {
    auto [it, inserted] = flow_index.try_emplace(h.flow, static_cast<std::uint32_t>(flow_index.size()));
    if (inserted) {
      v1::Flow* f = pb.add_flows();
      put_address(f->mutable_src_addr(), h.flow.src_addr);
      put_address(f->mutable_dst_addr(), h.flow.dst_addr);
      f->set_src_port(h.flow.src_port);
      f->set_dst_port(h.flow.dst_port);
    }
    v1::Half* out = pb.add_halves();
    out->set_kind(h.kind == HalfKind::send ? v1::Half::SEND : v1::Half::RECV);
    out->set_transport(static_cast<std::uint32_t>(h.transport));
    out->set_flow(it->second);
    out->set_domain(h.domain);
    out->set_seq(h.seq);
    out->set_bytes(h.bytes);
    out->set_realtime_delta_ns(h.realtime_ns - base);
  }
  encode_rdma_halves(batch.rdma_halves, base, pb);
  encode_message_halves(batch.messages, pb);
  std::string payload = pb.SerializeAsString();
  std::string record(kEnvelopeBytes, '\0');
  record[0] = static_cast<char>(kMagic0);
  record[1] = static_cast<char>(kMagic1);
  record[2] = static_cast<char>(kRecordVersion);
  record[3] = 0;
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) record[4 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  record += payload;
  return record;
}

DecodedRecord decode_record(std::span<const std::uint8_t> bytes) {
  if (bytes.size() >= 2 && (bytes[0] != kMagic0 || bytes[1] != kMagic1)) return reject(RecordReject::bad_magic);
  if (bytes.size() >= 3 && bytes[2] != kRecordVersion) return reject(RecordReject::unknown_version);
  if (bytes.size() < kEnvelopeBytes) return reject(RecordReject::truncated);
  if (bytes[3] != 0) return reject(RecordReject::unknown_version);  // flags this version does not define
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(bytes[4 + i]) << (8 * i);
  const std::size_t have = bytes.size() - kEnvelopeBytes;
  if (have < n) return reject(RecordReject::truncated);
  if (have > n) return reject(RecordReject::trailing_bytes);

  quiet_protobuf();
  v1::HalvesBatch pb;
  if (!pb.ParseFromArray(bytes.data() + kEnvelopeBytes, static_cast<int>(n))) return reject(RecordReject::bad_protobuf);
  if (pb.halves_size() + static_cast<std::int64_t>(pb.rdma_halves_size()) >
          static_cast<std::int64_t>(kMaxHalvesPerRecord) ||
      pb.domains_size() > static_cast<int>(kMaxDomainsPerRecord) || !is_valid_domain_name(pb.host()))
    return reject(RecordReject::invalid_content);
  WireBatch batch;
  batch.host = pb.host();
  for (const auto& d : pb.domains()) {
    if (!is_valid_domain_name(d)) return reject(RecordReject::invalid_content);
    batch.domains.push_back(d);
  }
  batch.clock_error_bound_ns = pb.clock().error_bound_ns();
  batch.clock_status = pb.clock().status();
  if (batch.clock_error_bound_ns < 0 || batch.clock_status > 3) return reject(RecordReject::invalid_content);
  batch.dropped_before = pb.dropped_before();
  std::vector<FlowKey> flows;
  flows.reserve(static_cast<std::size_t>(pb.flows_size()));
  for (const auto& f : pb.flows()) {
    FlowKey k;
    if (!get_address(f.src_addr(), k.src_addr) || !get_address(f.dst_addr(), k.dst_addr) || f.src_port() == 0 ||
        f.dst_port() == 0 || f.src_port() > 0xffff || f.dst_port() > 0xffff)
      return reject(RecordReject::invalid_content);
    k.src_port = static_cast<std::uint16_t>(f.src_port());
    k.dst_port = static_cast<std::uint16_t>(f.dst_port());
    flows.push_back(k);
  }
  batch.halves.reserve(static_cast<std::size_t>(pb.halves_size()));
  for (const auto& h : pb.halves()) {
    if ((h.kind() != v1::Half::SEND && h.kind() != v1::Half::RECV) || h.transport() > 3 || h.flow() >= flows.size() ||
        h.domain() >= batch.domains.size() || h.bytes() == 0)
      return reject(RecordReject::invalid_content);
    WireHalf w;
    w.kind = h.kind() == v1::Half::SEND ? HalfKind::send : HalfKind::recv;
    w.transport = static_cast<Transport>(h.transport());
    w.flow = flows[h.flow()];
    w.domain = h.domain();
    w.seq = h.seq();
    w.bytes = h.bytes();
    // Wrapping arithmetic: a hostile delta must not be undefined behaviour.
    w.realtime_ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(pb.base_realtime_ns()) +
                                              static_cast<std::uint64_t>(h.realtime_delta_ns()));
    batch.halves.push_back(w);
  }
  auto rdma = decode_rdma_halves(pb, batch.domains.size());
  if (!rdma) return reject(rdma.error);
  batch.rdma_halves = std::move(*rdma.value);
  auto messages = decode_message_halves(pb, batch.domains.size());
  if (!messages) return reject(messages.error);
  batch.messages = std::move(*messages.value);
  return DecodedRecord{std::move(batch), RecordReject::truncated};
}

}  // namespace skewscope::exchange
