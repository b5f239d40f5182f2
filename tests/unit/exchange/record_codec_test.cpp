#include "exchange/record_codec.hpp"

#include <doctest/doctest.h>

#include <limits>

#include "exchange/half_columns_codec.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

WireBatch sample_batch() {
  WireBatch b;
  b.host = "node-1";
  b.domains = {"pre", "infer"};
  b.clock_error_bound_ns = 1500;
  b.clock_status = 1;
  b.dropped_before = 3;
  FlowKey f{v4(10, 77, 0, 1), v4(10, 77, 0, 2), 41000, 7000};
  FlowKey r{v4(10, 77, 0, 2), v4(10, 77, 0, 1), 7000, 41000};
  const std::int64_t t0 = 1'790'000'000'000'000'000;
  b.halves.push_back({HalfKind::send, Transport::tcp, f, 100, 64, t0, 0});
  b.halves.push_back({HalfKind::recv, Transport::tcp, r, 9000, 64, t0 + 45'000, 1});
  b.halves.push_back({HalfKind::send, Transport::zmq, f, 164, 1, t0 - 5'000'000, 0});  // earlier than base
  return b;
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A record around a hand-made payload, with the given flags (what a hostile or older writer sends).
std::string record_of(const v1::HalvesBatch& pb, std::uint8_t flags) {
  std::string payload = pb.SerializeAsString();
  std::string r(kEnvelopeBytes, '\0');
  r[0] = 'S';
  r[1] = 'K';
  r[2] = static_cast<char>(kRecordVersion);
  r[3] = static_cast<char>(flags);
  for (int i = 0; i < 4; ++i) r[4 + i] = static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  return r + payload;
}

// An ongoing TCP request/response stream on one connection: sequence numbers move on by the bytes
// moved, sizes repeat, halves come 10-30 µs apart.
WireBatch stream_batch(std::size_t messages) {
  WireBatch b = sample_batch();
  b.halves.clear();
  FlowKey f{v4(10, 77, 0, 1), v4(10, 77, 0, 2), 41000, 7000};
  FlowKey r{v4(10, 77, 0, 2), v4(10, 77, 0, 1), 7000, 41000};
  std::uint32_t a = 4'000'000'000u, z = 17;  // a's stream wraps past 2^32 on the way
  std::int64_t t = 1'790'000'000'000'000'000;
  for (std::size_t i = 0; i < messages; ++i, t += 30'000) {
    b.halves.push_back({HalfKind::send, Transport::tcp, f, a, 200, t, 0});
    b.halves.push_back({HalfKind::recv, Transport::tcp, r, z, 64, t + 12'000 + static_cast<std::int64_t>(i % 7), 1});
    a += 200;
    z += 64;
  }
  return b;
}

}  // namespace

TEST_CASE("the agent writes columns, and reads the rows it wrote before") {
  const WireBatch b = sample_batch();
  const std::string columns = encode_record(b), rows = encode_record(b, RecordLayout::rows);
  CHECK(static_cast<std::uint8_t>(columns[3]) == kRecordFlagColumns);
  CHECK(rows[3] == 0);
  for (const std::string* rec : {&columns, &rows}) {
    DecodedRecord d = decode_record(bytes_of(*rec));
    REQUIRE(d.value);
    CHECK(*d.value == b);
  }
}

TEST_CASE("a half of an ongoing TCP stream costs a few bytes in columns, far fewer than in rows") {
  const WireBatch b = stream_batch(500);
  const std::string columns = encode_record(b), rows = encode_record(b, RecordLayout::rows);
  DecodedRecord d = decode_record(bytes_of(columns));
  REQUIRE(d.value);
  CHECK(*d.value == b);
  const double per_half = static_cast<double>(columns.size()) / static_cast<double>(b.halves.size());
  MESSAGE("bytes per half: columns " << per_half << ", rows "
                                     << static_cast<double>(rows.size()) / static_cast<double>(b.halves.size()));
  CHECK(per_half < 6.5);  // head, seq and size a byte each, the time 3 (10-30 µs); domains change per stream only
  CHECK(columns.size() * 2 < rows.size());
}

TEST_CASE("columns keep extreme values exactly: wrapping sequences, the largest size, any two times") {
  WireBatch b = sample_batch();
  b.halves.clear();
  FlowKey f{v4(10, 77, 0, 1), v4(10, 77, 0, 2), 65535, 1};
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  b.halves.push_back({HalfKind::send, Transport::zmtp, f, 0xffffffffu, 0xffffffffu, hi, 1});
  b.halves.push_back({HalfKind::send, Transport::tcp, f, 0, 1, lo, 0});
  b.halves.push_back({HalfKind::send, Transport::rdma, f, 0x80000000u, 0xfffffffeu, 0, 0});
  b.halves.push_back({HalfKind::recv, Transport::kafka, f, 7, 1, hi, 1});
  DecodedRecord d = decode_record(bytes_of(encode_record(b)));
  REQUIRE(d.value);
  CHECK(*d.value == b);
}

TEST_CASE("malformed columns are invalid content, never a partial batch") {
  const WireBatch b = stream_batch(3);
  v1::HalvesBatch good;
  const std::string rec = encode_record(b);
  REQUIRE(good.ParseFromArray(rec.data() + kEnvelopeBytes, static_cast<int>(rec.size() - kEnvelopeBytes)));
  REQUIRE(decode_record(bytes_of(record_of(good, kRecordFlagColumns))).value);
  auto refused = [&](auto&& spoil) {
    v1::HalvesBatch pb = good;
    spoil(*pb.mutable_columns());
    return decode_record(bytes_of(record_of(pb, kRecordFlagColumns))).error == RecordReject::invalid_content;
  };
  CHECK(refused([](v1::HalfColumns& c) { c.add_head(0); }));                   // a column shorter than head
  CHECK(refused([](v1::HalfColumns& c) { c.mutable_time()->RemoveLast(); }));  // and the other way
  CHECK(refused([](v1::HalfColumns& c) { c.add_domain(0); }));                 // a change no head announces
  CHECK(refused([](v1::HalfColumns& c) { c.set_head(1, c.head(1) & ~2u); }));  // a head's change missing
  CHECK(refused([](v1::HalfColumns& c) { c.set_head(0, 2 << 2); }));           // no third flow
  CHECK(refused([](v1::HalfColumns& c) { c.set_domain(0, 2); }));              // two domain names only
  CHECK(refused([](v1::HalfColumns& c) { c.set_flow_transport(1, 5); }));      // no transport 5
  CHECK(refused([](v1::HalfColumns& c) { c.add_flow_transport(0); }));         // flow columns disagree
  CHECK(refused([](v1::HalfColumns& c) { c.set_bytes(0, 0); }));               // a first size of 0
  CHECK(refused([](v1::HalfColumns& c) { c.set_bytes(2, -200); }));            // a later size of 0
  CHECK(refused([](v1::HalfColumns& c) { c.set_bytes(0, 1ll << 32); }));       // beyond 32 bits
  CHECK(refused([](v1::HalfColumns& c) { c.set_bytes(2, std::numeric_limits<std::int64_t>::min()); }));
  CHECK(refused([](v1::HalfColumns& c) { c.set_flow_src_addr(0, 9); }));           // no such address
  CHECK(refused([](v1::HalfColumns& c) { c.set_flow_dst_port(1, 0); }));           // port 0
  CHECK(refused([](v1::HalfColumns& c) { c.set_flow_src_port(1, 65536); }));       // port beyond 16 bits
  CHECK(refused([](v1::HalfColumns& c) { c.add_flow_src_addr(0); }));              // flow columns disagree
  CHECK(refused([](v1::HalfColumns& c) { c.mutable_addresses(0)->pop_back(); }));  // 15-byte address
  SUBCASE("rows in a columns record, and columns in a rows record, are refused: a reader of one form would skip them") {
    v1::HalvesBatch both = good;
    const std::string rows = encode_record(b, RecordLayout::rows);
    v1::HalvesBatch row_form;
    REQUIRE(row_form.ParseFromArray(rows.data() + kEnvelopeBytes, static_cast<int>(rows.size() - kEnvelopeBytes)));
    both.mutable_halves()->CopyFrom(row_form.halves());
    both.mutable_flows()->CopyFrom(row_form.flows());
    CHECK((decode_record(bytes_of(record_of(both, kRecordFlagColumns))).error == RecordReject::invalid_content));
    CHECK((decode_record(bytes_of(record_of(good, 0))).error == RecordReject::invalid_content));
  }
  SUBCASE("as many halves as a record may hold, and one more") {
    v1::HalvesBatch many = good;
    v1::HalfColumns& c = *many.mutable_columns();
    while (static_cast<std::size_t>(c.head_size()) < kMaxHalvesPerRecord) {
      c.add_head(0);  // flow 0, a send like the last one: same size, next sequence, same time
      c.add_seq(0);
      c.add_bytes(0);
      c.add_time(0);
    }
    DecodedRecord full = decode_record(bytes_of(record_of(many, kRecordFlagColumns)));
    REQUIRE(full.value);
    CHECK(full.value->halves.size() == kMaxHalvesPerRecord);
    c.add_head(0);
    c.add_seq(0);
    c.add_bytes(0);
    c.add_time(0);
    CHECK((decode_record(bytes_of(record_of(many, kRecordFlagColumns))).error == RecordReject::invalid_content));
  }
}

TEST_CASE("a batch survives encode and decode unchanged") {
  WireBatch b = sample_batch();
  std::string rec = encode_record(b);
  DecodedRecord d = decode_record(bytes_of(rec));
  REQUIRE(d.value);
  CHECK(*d.value == b);
  // Flows are shared: two flows, three halves.
  CHECK(rec.size() < 8 + 2 * (2 * 16 + 8) + 3 * 24 + 64);
}

TEST_CASE("an empty batch round-trips") {
  WireBatch b;
  b.host = "h";
  DecodedRecord d = decode_record(bytes_of(encode_record(b)));
  REQUIRE(d.value);
  CHECK(*d.value == b);
}

TEST_CASE("every truncated prefix is rejected, never accepted as a shorter batch") {
  std::string rec = encode_record(sample_batch());
  for (std::size_t n = 0; n < rec.size(); ++n) {
    DecodedRecord d = decode_record(bytes_of(rec.substr(0, n)));
    CHECK_MESSAGE(!d.value, "prefix of " << n << " bytes accepted");
    CHECK((d.error == RecordReject::truncated));
  }
  CHECK((decode_record(bytes_of(rec + "x")).error == RecordReject::trailing_bytes));
}

TEST_CASE("another format version is refused before parsing") {
  std::string rec = encode_record(sample_batch());
  for (char v : {char(0), char(2), char(0x7f)}) {
    std::string other = rec;
    other[2] = v;
    DecodedRecord d = decode_record(bytes_of(other));
    CHECK(!d.value);
    CHECK((d.error == RecordReject::unknown_version));
  }
  for (char f : {char(2), char(3), char(0x80)}) {  // flags this version does not define
    std::string flags = rec;
    flags[3] = f;
    CHECK((decode_record(bytes_of(flags)).error == RecordReject::unknown_version));
  }
}

TEST_CASE("garbage is a counted rejection") {
  CHECK((decode_record(bytes_of("hello, kafka")).error == RecordReject::bad_magic));
  CHECK((decode_record(bytes_of("")).error == RecordReject::truncated));
  std::string junk = "SK";
  junk += char(1);
  junk += char(0);
  junk += std::string("\x05\x00\x00\x00", 4);
  junk += "\xff\xff\xff\xff\xff";
  CHECK((decode_record(bytes_of(junk)).error == RecordReject::bad_protobuf));
  // Every single-byte corruption of a valid record: rejected or decoded, never a crash.
  for (const RecordLayout layout : {RecordLayout::columns, RecordLayout::rows}) {
    std::string rec = encode_record(stream_batch(4), layout);
    for (std::size_t i = 0; i < rec.size(); ++i) {
      for (const std::uint8_t mask : {0x5a, 0x01, 0x80}) {
        std::string bad = rec;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        (void)decode_record(bytes_of(bad));
      }
    }
  }
}

TEST_CASE("out-of-range references are invalid content") {
  WireBatch b = sample_batch();
  b.halves[1].domain = 7;  // no such domain name
  CHECK((decode_record(bytes_of(encode_record(b))).error == RecordReject::invalid_content));
  WireBatch bad_name = sample_batch();
  bad_name.domains[0] = "has space";
  CHECK((decode_record(bytes_of(encode_record(bad_name))).error == RecordReject::invalid_content));
}

}  // namespace skewscope::exchange
