#include "exchange/rdma_record_codec.hpp"

#include <doctest/doctest.h>

#include "exchange/record_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

Address gid_v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

// Both directions of one RC connection between 10.77.0.1 (QPN 0x1234) and 10.77.0.2 (QPN 0xabcdef).
WireBatch rdma_batch() {
  WireBatch b;
  b.host = "node-1";
  b.domains = {"a"};
  const std::int64_t t0 = 1'790'000'000'000'000'000;
  const Address mine = gid_v4(10, 77, 0, 1), peer = gid_v4(10, 77, 0, 2);
  for (std::uint64_t k = 0; k < 3; ++k) {
    b.rdma_halves.push_back(
        {HalfKind::send, mine, peer, 0x1234, 0xabcdef, 4242, 99, k, 64, t0 + static_cast<std::int64_t>(k) * 1000, 0});
    b.rdma_halves.push_back({HalfKind::recv, mine, peer, 0x1234, 0xabcdef, 4242, 99, k, 0, t0 - 7'000, 0});
  }
  // A reconnect of the same QP: another generation, another connection entry.
  b.rdma_halves.push_back({HalfKind::send, mine, peer, 0x1234, 0x77, 4242, 100, 0, 8, t0 + 5'000, 0});
  return b;
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The record's protobuf payload, to corrupt its RDMA fields one at a time.
v1::HalvesBatch payload_of(const WireBatch& b) {
  const std::string rec = encode_record(b);
  v1::HalvesBatch pb;
  REQUIRE(pb.ParseFromArray(rec.data() + kEnvelopeBytes, static_cast<int>(rec.size() - kEnvelopeBytes)));
  return pb;
}

std::string record_of(const v1::HalvesBatch& pb) {
  const std::string payload = pb.SerializeAsString();
  std::string rec = {'S', 'K', 1, 0};
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) rec += static_cast<char>((n >> (8 * i)) & 0xff);
  return rec + payload;
}

RecordReject reject_of(const v1::HalvesBatch& pb) {
  DecodedRecord d = decode_record(bytes_of(record_of(pb)));
  REQUIRE_FALSE(d.value);
  return d.error;
}

}  // namespace

TEST_CASE("RDMA halves survive encode and decode unchanged, zero-length sends included") {
  WireBatch b = rdma_batch();
  DecodedRecord d = decode_record(bytes_of(encode_record(b)));
  REQUIRE(d.value);
  CHECK(*d.value == b);
  // Two connections (two generations), written once each.
  CHECK(payload_of(b).rdma_connections_size() == 2);
}

TEST_CASE("TCP and RDMA halves share a record") {
  WireBatch b = rdma_batch();
  FlowKey f{gid_v4(10, 77, 0, 1), gid_v4(10, 77, 0, 2), 41000, 7000};
  b.halves.push_back({HalfKind::send, Transport::tcp, f, 1, 10, 1'790'000'000'000'000'123, 0});
  DecodedRecord d = decode_record(bytes_of(encode_record(b)));
  REQUIRE(d.value);
  CHECK(*d.value == b);
}

TEST_CASE("every truncated prefix of a record with RDMA halves is rejected") {
  const std::string rec = encode_record(rdma_batch());
  for (std::size_t n = 0; n < rec.size(); ++n) {
    DecodedRecord d = decode_record(bytes_of(rec.substr(0, n)));
    CHECK_MESSAGE(!d.value, "prefix of " << n << " bytes accepted");
    CHECK((d.error == RecordReject::truncated));
  }
}

TEST_CASE("invalid RDMA content is a counted rejection") {
  const v1::HalvesBatch good = payload_of(rdma_batch());
  auto with = [&](auto change) {
    v1::HalvesBatch pb = good;
    change(pb);
    return reject_of(pb);
  };
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_connections(0)->set_local_gid("short"); }) ==
         RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_connections(1)->set_peer_gid(std::string(17, 'x')); }) ==
         RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_connections(0)->set_local_qpn(1u << 24); }) ==
         RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_connections(0)->set_peer_qpn(0xffffffffu); }) ==
         RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_halves(2)->set_connection(2); }) ==
         RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_halves(0)->set_domain(1); }) == RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_halves(3)->set_kind(v1::RdmaHalf::KIND_UNSPECIFIED); }) ==
         RecordReject::invalid_content));
  CHECK((with([](v1::HalvesBatch& pb) { pb.mutable_rdma_halves(3)->set_kind(static_cast<v1::RdmaHalf::Kind>(9)); }) ==
         RecordReject::invalid_content));
  // Connections nobody refers to beyond the halves' count: not a record we wrote.
  CHECK((with([](v1::HalvesBatch& pb) {
           for (int i = 0; i < 8; ++i) *pb.add_rdma_connections() = pb.rdma_connections(0);
         }) == RecordReject::invalid_content));
  // A hostile delta wraps instead of overflowing.
  v1::HalvesBatch wild = good;
  wild.mutable_rdma_halves(0)->set_realtime_delta_ns(INT64_MAX);
  CHECK(decode_record(bytes_of(record_of(wild))).value);
}

}  // namespace skewscope::exchange
