#include "exchange/record_codec.hpp"

#include <doctest/doctest.h>

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

}  // namespace

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
  std::string flags = rec;
  flags[3] = 1;
  CHECK((decode_record(bytes_of(flags)).error == RecordReject::unknown_version));
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
  std::string rec = encode_record(sample_batch());
  for (std::size_t i = 0; i < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    (void)decode_record(bytes_of(bad));
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
