#include "exchange/record_codec.hpp"

#include <algorithm>
#include <unordered_map>

#include "domains/domain_spec.hpp"
#include "domains/tenant_map.hpp"
#include "exchange/flow_codec.hpp"
#include "exchange/half_columns_codec.hpp"
#include "exchange/message_record_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

constexpr std::uint8_t kMagic0 = 'S';
constexpr std::uint8_t kMagic1 = 'K';

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

// The form before columns: flows listed once, a Half message per half (still read).
void encode_half_rows(const std::vector<WireHalf>& halves, std::int64_t base, v1::HalvesBatch& pb) {
  // A batch holds one host pair: a few flows, many halves each. Addresses go once per flow.
  std::unordered_map<FlowKey, std::uint32_t, FlowKeyHash> flow_index;
  for (const auto& h : halves) {
    auto [it, inserted] = flow_index.try_emplace(h.flow, static_cast<std::uint32_t>(flow_index.size()));
    if (inserted) {
      put_flow(pb.add_flows(), h.flow);
    }
    // ZMTP message halves travel in a field of their own (halves.proto: older readers skip it).
    v1::Half* out = h.transport == Transport::zmtp ? pb.add_zmtp_halves() : pb.add_halves();
    out->set_kind(h.kind == HalfKind::send ? v1::Half::SEND : v1::Half::RECV);
    out->set_transport(static_cast<std::uint32_t>(h.transport));
    out->set_flow(it->second);
    out->set_domain(h.domain);
    out->set_seq(h.seq);
    out->set_bytes(h.bytes);
    out->set_realtime_delta_ns(h.realtime_ns - base);
  }
}

}  // namespace

std::string encode_record(const WireBatch& batch, RecordLayout layout) {
  v1::HalvesBatch pb;
  pb.set_host(batch.host);
  for (const auto& d : batch.domains) pb.add_domains(d);
  for (const auto& t : batch.domain_tenants) pb.add_domain_tenants(t);
  pb.mutable_clock()->set_error_bound_ns(batch.clock_error_bound_ns);
  pb.mutable_clock()->set_status(batch.clock_status);
  pb.set_dropped_before(batch.dropped_before);
  const std::int64_t base = !batch.halves.empty()        ? batch.halves.front().realtime_ns
                            : !batch.rdma_halves.empty() ? batch.rdma_halves.front().realtime_ns
                                                         : 0;
  pb.set_base_realtime_ns(base);
  if (layout == RecordLayout::columns) {
    if (!batch.halves.empty()) encode_half_columns(batch.halves, base, *pb.mutable_columns());
  } else {
    encode_half_rows(batch.halves, base, pb);
  }
  encode_rdma_halves(batch.rdma_halves, base, pb);
  encode_message_halves(batch.messages, pb);
  encode_translations(batch.translations, pb);
  pb.set_forwarded(batch.forwarded);
  std::string payload = pb.SerializeAsString();
  std::string record(kEnvelopeBytes, '\0');
  record[0] = static_cast<char>(kMagic0);
  record[1] = static_cast<char>(kMagic1);
  record[2] = static_cast<char>(kRecordVersion);
  record[3] = static_cast<char>(layout == RecordLayout::columns ? kRecordFlagColumns : 0);
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) record[4 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
  record += payload;
  return record;
}

DecodedRecord decode_record(std::span<const std::uint8_t> bytes) {
  if (bytes.size() >= 2 && (bytes[0] != kMagic0 || bytes[1] != kMagic1)) return reject(RecordReject::bad_magic);
  if (bytes.size() >= 3 && bytes[2] != kRecordVersion) return reject(RecordReject::unknown_version);
  if (bytes.size() < kEnvelopeBytes) return reject(RecordReject::truncated);
  if ((bytes[3] & ~kRecordFlagColumns) != 0) return reject(RecordReject::unknown_version);  // flags it does not define
  const bool columns = (bytes[3] & kRecordFlagColumns) != 0;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(bytes[4 + i]) << (8 * i);
  const std::size_t have = bytes.size() - kEnvelopeBytes;
  if (have < n) return reject(RecordReject::truncated);
  if (have > n) return reject(RecordReject::trailing_bytes);

  quiet_protobuf();
  v1::HalvesBatch pb;
  if (!pb.ParseFromArray(bytes.data() + kEnvelopeBytes, static_cast<int>(n))) return reject(RecordReject::bad_protobuf);
  // One form or the other: rows in a columns record (or columns in a rows one) would be halves a
  // reader of the other form skips unseen.
  if (columns ? (pb.flows_size() != 0 || pb.halves_size() != 0 || pb.zmtp_halves_size() != 0) : pb.has_columns())
    return reject(RecordReject::invalid_content);
  if (pb.halves_size() + static_cast<std::int64_t>(pb.zmtp_halves_size()) + pb.columns().head_size() +
              static_cast<std::int64_t>(pb.rdma_halves_size()) >
          static_cast<std::int64_t>(kMaxHalvesPerRecord) ||
      pb.domains_size() > static_cast<int>(kMaxDomainsPerRecord) || !is_valid_domain_name(pb.host()))
    return reject(RecordReject::invalid_content);
  WireBatch batch;
  batch.host = pb.host();
  for (const auto& d : pb.domains()) {
    if (!is_valid_domain_name(d)) return reject(RecordReject::invalid_content);
    batch.domains.push_back(d);
  }
  // One tenant per domain, or none at all; each "" or a tenant name (domains/tenant_map.hpp).
  if (pb.domain_tenants_size() != 0 && pb.domain_tenants_size() != pb.domains_size())
    return reject(RecordReject::invalid_content);
  for (const auto& t : pb.domain_tenants()) {
    if (!t.empty() && !is_valid_tenant_name(t)) return reject(RecordReject::invalid_content);
    batch.domain_tenants.push_back(t);
  }
  batch.clock_error_bound_ns = pb.clock().error_bound_ns();
  batch.clock_status = pb.clock().status();
  if (batch.clock_error_bound_ns < 0 || batch.clock_status > 3) return reject(RecordReject::invalid_content);
  batch.dropped_before = pb.dropped_before();
  std::vector<FlowKey> flows;
  flows.reserve(static_cast<std::size_t>(pb.flows_size()));
  for (const auto& f : pb.flows()) {
    FlowKey k;
    if (!get_flow(f, k)) return reject(RecordReject::invalid_content);
    flows.push_back(k);
  }
  batch.halves.reserve(static_cast<std::size_t>(pb.halves_size() + pb.zmtp_halves_size()));
  // TCP (and the other syscall-level transports) in `halves`, ZMTP messages in `zmtp_halves`:
  // each list holds its own transports only.
  auto decode_half = [&](const v1::Half& h, bool zmtp) {
    const bool transport_ok = zmtp ? h.transport() == static_cast<std::uint32_t>(Transport::zmtp) : h.transport() <= 3;
    if ((h.kind() != v1::Half::SEND && h.kind() != v1::Half::RECV) || !transport_ok || h.flow() >= flows.size() ||
        h.domain() >= batch.domains.size() || h.bytes() == 0)
      return false;
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
    return true;
  };
  for (const auto& h : pb.halves())
    if (!decode_half(h, false)) return reject(RecordReject::invalid_content);
  for (const auto& h : pb.zmtp_halves())
    if (!decode_half(h, true)) return reject(RecordReject::invalid_content);
  if (columns) {
    auto in_columns = decode_half_columns(pb.columns(), batch.domains.size(), pb.base_realtime_ns());
    if (!in_columns) return reject(in_columns.error);
    batch.halves = std::move(*in_columns.value);
  }
  auto rdma = decode_rdma_halves(pb, batch.domains.size());
  if (!rdma) return reject(rdma.error);
  batch.rdma_halves = std::move(*rdma.value);
  auto messages = decode_message_halves(pb, batch.domains.size());
  if (!messages) return reject(messages.error);
  batch.messages = std::move(*messages.value);
  auto translations = decode_translations(pb);
  if (!translations) return reject(translations.error);
  batch.translations = std::move(*translations.value);
  batch.forwarded = pb.forwarded();
  return DecodedRecord{std::move(batch), RecordReject::truncated};
}

}  // namespace skewscope::exchange
