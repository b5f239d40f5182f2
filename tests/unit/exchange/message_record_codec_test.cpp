#include "exchange/message_record_codec.hpp"

#include <doctest/doctest.h>

#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

WireBatch message_batch() {
  WireBatch b;
  b.host = "consumer-host";
  b.domains = {"producer", "consumer"};
  const std::int64_t t0 = 1'790'000'000'000'000'000;
  WireMessageHalf produced;
  produced.kind = WireMessageHalf::Kind::produced;
  produced.domain = 0;
  produced.topic = "orders";
  produced.partition = 1;
  produced.producer_id = 4711;
  produced.producer_epoch = 0;
  produced.base_sequence = 50;
  produced.crc = 0xdeadbeef;
  produced.attributes = 3;  // lz4
  produced.base_offset = 1200;
  produced.records = 50;
  produced.bytes = 900;
  produced.realtime_ns = t0;
  WireMessageHalf fetched = produced;
  fetched.kind = WireMessageHalf::Kind::fetched;
  fetched.domain = 1;
  fetched.realtime_ns = t0 + 2'000'000;
  fetched.consumer = FlowKey{v4(2), v4(3), 40100, 9092};
  WireMessageHalf plain = produced;  // non-idempotent, acks=0: no producer id, no offset
  plain.producer_id = -1;
  plain.producer_epoch = -1;
  plain.base_sequence = -1;
  plain.base_offset.reset();
  plain.realtime_ns = t0 - 7'000;  // earlier than the base
  b.messages = {produced, fetched, plain};
  return b;
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Re-encodes a record after `edit` changed its protobuf: content checks, not framing.
std::string edited(const WireBatch& b, auto edit) {
  const std::string rec = encode_record(b);
  v1::HalvesBatch pb;
  REQUIRE(pb.ParseFromArray(rec.data() + kEnvelopeBytes, static_cast<int>(rec.size() - kEnvelopeBytes)));
  edit(pb);
  const std::string payload = pb.SerializeAsString();
  std::string out = rec.substr(0, 4);
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + payload;
}

}  // namespace

TEST_CASE("kafka batch halves survive encode and decode unchanged, beside tcp halves") {
  WireBatch b = message_batch();
  b.halves.push_back(
      {HalfKind::send, Transport::tcp, FlowKey{v4(1), v4(3), 41000, 9092}, 7, 64, 1'790'000'000'000'000'000, 0});
  DecodedRecord d = decode_record(bytes_of(encode_record(b)));
  REQUIRE(d.value);
  CHECK(*d.value == b);
}

TEST_CASE("every truncated prefix of a record with kafka halves is rejected") {
  const std::string rec = encode_record(message_batch());
  for (std::size_t n = 0; n < rec.size(); ++n) {
    DecodedRecord d = decode_record(bytes_of(rec.substr(0, n)));
    CHECK_MESSAGE(!d.value, "prefix of " << n << " bytes accepted");
    CHECK((d.error == RecordReject::truncated));
  }
}

TEST_CASE("invalid kafka halves reject the record as invalid_content") {
  const WireBatch b = message_batch();
  using M = v1::KafkaBatchHalf;
  const std::vector<std::pair<const char*, std::function<void(v1::HalvesBatch&)>>> cases = {
      {"no kind", [](auto& pb) { pb.mutable_message_halves(0)->set_kind(M::KIND_UNSPECIFIED); }},
      {"unknown kind", [](auto& pb) { pb.mutable_message_halves(0)->set_kind(static_cast<M::Kind>(7)); }},
      {"domain out of range", [](auto& pb) { pb.mutable_message_halves(1)->set_domain(2); }},
      {"empty topic", [](auto& pb) { pb.mutable_message_halves(0)->set_topic(""); }},
      {"topic with a slash", [](auto& pb) { pb.mutable_message_halves(0)->set_topic("a/b"); }},
      {"topic too long", [](auto& pb) { pb.mutable_message_halves(0)->set_topic(std::string(250, 't')); }},
      {"negative partition", [](auto& pb) { pb.mutable_message_halves(0)->set_partition(-1); }},
      {"epoch beyond int16", [](auto& pb) { pb.mutable_message_halves(0)->set_producer_epoch(40000); }},
      {"attributes beyond int16", [](auto& pb) { pb.mutable_message_halves(0)->set_attributes(0x10000); }},
      {"negative record count", [](auto& pb) { pb.mutable_message_halves(0)->set_records(-1); }},
      {"zero bytes", [](auto& pb) { pb.mutable_message_halves(0)->set_bytes(0); }},
      {"negative base offset", [](auto& pb) { pb.mutable_message_halves(0)->set_base_offset(-5); }},
      {"fetched without consumer", [](auto& pb) { pb.mutable_message_halves(1)->clear_consumer(); }},
      {"produced with consumer", [](auto& pb) { pb.mutable_message_halves(0)->mutable_consumer()->set_local_port(1); }},
      {"short consumer address",
       [](auto& pb) { pb.mutable_message_halves(1)->mutable_consumer()->set_local_addr("abc"); }},
      {"consumer port 0", [](auto& pb) { pb.mutable_message_halves(1)->mutable_consumer()->set_remote_port(0); }},
      {"consumer port > 65535",
       [](auto& pb) { pb.mutable_message_halves(1)->mutable_consumer()->set_local_port(70000); }},
  };
  for (const auto& [name, edit] : cases) {
    DecodedRecord d = decode_record(bytes_of(edited(b, edit)));
    CHECK_MESSAGE(!d.value, name);
    CHECK_MESSAGE((d.error == RecordReject::invalid_content), name);
  }
  // The edit helper itself keeps a valid record valid.
  CHECK(decode_record(bytes_of(edited(b, [](auto&) {}))).value);
}

TEST_CASE("too many kafka halves in one record are refused") {
  WireBatch b = message_batch();
  b.messages.resize(kMaxHalvesPerRecord + 1, b.messages.front());
  CHECK((decode_record(bytes_of(encode_record(b))).error == RecordReject::invalid_content));
}

TEST_CASE("both halves of a batch get one key: its topic-partition") {
  const WireBatch b = message_batch();
  CHECK(message_key(b.messages[0].topic, b.messages[0].partition) == "kafka/orders/1");
  CHECK(message_key(b.messages[1].topic, b.messages[1].partition) == message_key("orders", 1));
  CHECK(message_key("orders", 0) != message_key("orders", 1));
}

TEST_CASE("the wire form keeps what the pairing key needs") {
  const WireBatch b = message_batch();
  for (const auto& h : b.messages) {
    const auto batch = to_batch_half(h);
    const WireMessageHalf back = to_wire(batch, h.domain, h.realtime_ns, h.consumer);
    CHECK(back == h);
  }
  // Idempotent batch: produced and fetched halves name the same key; the plain one the CRC.
  CHECK(protocols::kafka::primary_key(to_batch_half(b.messages[0])) ==
        protocols::kafka::primary_key(to_batch_half(b.messages[1])));
  CHECK(
      (protocols::kafka::primary_key(to_batch_half(b.messages[2]))->kind == protocols::kafka::PairingKey::Kind::kCrc));
}

}  // namespace skewscope::exchange
