#include "otlp/span_export.hpp"

#include <doctest/doctest.h>
#include <zlib.h>

#include <map>

#include "opentelemetry/otlp_trace_subset.pb.h"

using namespace skewscope;
using namespace skewscope::otlp;
namespace pb = skewscope::otlp::v1;

namespace {

ExportSpan tcp_span(std::int64_t send_ns, std::int64_t recv_ns) {
  ExportSpan s;
  s.span.src = 0;
  s.span.dst = 1;
  s.span.send_ns = send_ns;
  s.span.recv_ns = recv_ns;
  s.span.bytes = 100;
  s.src = "pre";
  s.dst = "infer";
  s.state = PairState::ok;
  s.corrected.send_ns = send_ns;
  s.corrected.recv_ns = recv_ns;
  return s;
}

std::map<std::string, pb::AnyValue> attributes(const pb::Span& span) {
  std::map<std::string, pb::AnyValue> out;
  for (const auto& kv : span.attributes()) out[kv.key()] = kv.value();
  return out;
}

pb::ExportTraceServiceRequest decode(const std::string& bytes) {
  pb::ExportTraceServiceRequest request;
  REQUIRE(request.ParseFromString(bytes));
  return request;
}

}  // namespace

TEST_CASE("a TCP span: raw times, its attributes typed, neutral kind, random valid ids") {
  Attributes resource{{"service.name", "skewscope"}, {"host.name", "h1"}};
  std::mt19937_64 ids(1);
  auto negative = tcp_span(1'700'000'000'000'000'000, 1'699'999'999'999'000'000);  // 1 ms before its send
  negative.state = PairState::violated;
  auto request = decode(encode_request({tcp_span(1'700'000'000'000'000'000, 1'700'000'000'000'050'000), negative},
                                       ExportIdentity{resource, "9.9"}, ids));
  REQUIRE(request.resource_spans_size() == 1);
  const auto& rs = request.resource_spans(0);
  REQUIRE(rs.resource().attributes_size() == 2);
  CHECK(rs.resource().attributes(0).key() == "service.name");
  REQUIRE(rs.scope_spans_size() == 1);
  CHECK(rs.scope_spans(0).scope().name() == "skewscope");
  CHECK(rs.scope_spans(0).scope().version() == "9.9");
  REQUIRE(rs.scope_spans(0).spans_size() == 2);
  const auto& ok = rs.scope_spans(0).spans(0);
  CHECK(ok.start_time_unix_nano() == 1'700'000'000'000'000'000ull);
  CHECK(ok.end_time_unix_nano() == 1'700'000'000'000'050'000ull);
  CHECK(ok.kind() == pb::Span::SPAN_KIND_UNSPECIFIED);
  CHECK(ok.trace_id().size() == 16);
  CHECK(ok.span_id().size() == 8);
  CHECK(ok.name() == "tcp pre -> infer");
  auto a = attributes(ok);
  CHECK(a["skewscope.src"].string_value() == "pre");
  CHECK(a["skewscope.dst"].string_value() == "infer");
  CHECK(a["skewscope.transport"].string_value() == "tcp");
  CHECK(a["skewscope.negative"].value_case() == pb::AnyValue::kBoolValue);
  CHECK_FALSE(a["skewscope.negative"].bool_value());
  CHECK(a["skewscope.state"].string_value() == "ok");
  CHECK(a["skewscope.timestamp_source"].string_value() == "syscall");
  CHECK(a["skewscope.corrected"].value_case() == pb::AnyValue::kBoolValue);
  CHECK_FALSE(a["skewscope.corrected"].bool_value());
  CHECK(a.count("skewscope.offset") == 0);  // no settled estimate: no offset, no correction
  CHECK(a.count("skewscope.corrected_end_unix_nano") == 0);
  CHECK(a.count("messaging.system") == 0);

  const auto& bad = rs.scope_spans(0).spans(1);
  CHECK(bad.end_time_unix_nano() < bad.start_time_unix_nano());  // raw: kept inverted
  auto b = attributes(bad);
  CHECK(b["skewscope.negative"].bool_value());
  CHECK(b["skewscope.state"].string_value() == "violated");
  CHECK(bad.trace_id() != ok.trace_id());
}

TEST_CASE("a Kafka span is a CONSUMER with the messaging conventions; a correction is flagged") {
  auto s = tcp_span(2'000'000'000, 2'003'000'000);
  s.span.transport = Transport::kafka;
  s.topic = "orders";
  s.partition = 3;
  s.records = 12;
  s.offset_ns = 2'500'000;
  s.bound_ns = 400'000;
  s.corrected.corrected = true;
  s.corrected.corrected_recv_ns = 2'000'500'000;
  s.corrected.capped = false;
  Attributes resource{{"service.name", "skewscope"}};
  std::mt19937_64 ids(2);
  auto request = decode(encode_request({s}, ExportIdentity{resource, "1"}, ids));
  const auto& span = request.resource_spans(0).scope_spans(0).spans(0);
  CHECK(span.kind() == pb::Span::SPAN_KIND_CONSUMER);
  CHECK(span.name() == "orders deliver");
  CHECK(span.start_time_unix_nano() == 2'000'000'000ull);  // raw, whatever the correction
  CHECK(span.end_time_unix_nano() == 2'003'000'000ull);
  auto a = attributes(span);
  CHECK(a["messaging.system"].string_value() == "kafka");
  CHECK(a["messaging.destination.name"].string_value() == "orders");
  CHECK(a["messaging.destination.partition.id"].string_value() == "3");
  CHECK(a["messaging.batch.message_count"].int_value() == 12);
  CHECK(a["skewscope.offset"].double_value() == doctest::Approx(0.0025));
  CHECK(a["skewscope.offset_bound"].double_value() == doctest::Approx(0.0004));
  CHECK(a["skewscope.corrected"].bool_value());
  CHECK(a["skewscope.corrected_start_unix_nano"].int_value() == 2'000'000'000);
  CHECK(a["skewscope.corrected_end_unix_nano"].int_value() == 2'000'500'000);
  CHECK(a["skewscope.correction_capped"].value_case() == pb::AnyValue::kBoolValue);
}

FlowKey flow(std::uint8_t src_last, std::uint16_t src_port, std::uint8_t dst_last, std::uint16_t dst_port) {
  FlowKey f;
  f.src_addr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, src_last};
  f.dst_addr = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, dst_last};
  f.src_port = src_port;
  f.dst_port = dst_port;
  return f;
}

TEST_CASE("the endpoints: TCP's peer is the sender, Kafka's the broker (also server.*); absent when unknown") {
  Attributes resource{{"service.name", "skewscope"}};
  std::mt19937_64 ids(4);
  auto tcp = tcp_span(1000, 2000);
  tcp.socket = flow(1, 40000, 2, 7000);
  auto kafka = tcp_span(1000, 2000);
  kafka.span.transport = Transport::kafka;
  kafka.socket = flow(3, 51000, 9, 9092);  // consumer -> broker
  auto unknown = tcp_span(1000, 2000);
  auto request = decode(encode_request({tcp, kafka, unknown}, ExportIdentity{resource, "1"}, ids));
  const auto& spans = request.resource_spans(0).scope_spans(0).spans();
  auto t = attributes(spans[0]);
  CHECK(t["network.peer.address"].string_value() == "10.77.0.1");
  CHECK(t["network.peer.port"].int_value() == 40000);
  CHECK(t["network.local.address"].string_value() == "10.77.0.2");
  CHECK(t["network.local.port"].int_value() == 7000);
  CHECK(t["network.transport"].string_value() == "tcp");
  CHECK(t.count("server.address") == 0);  // who accepted the connection is not known
  auto k = attributes(spans[1]);
  CHECK(k["server.address"].string_value() == "10.77.0.9");
  CHECK(k["server.port"].int_value() == 9092);
  CHECK(k["network.peer.address"].string_value() == "10.77.0.9");
  CHECK(k["network.peer.port"].int_value() == 9092);
  CHECK(k["network.local.address"].string_value() == "10.77.0.3");
  auto u = attributes(spans[2]);
  for (const char* key : {"network.peer.address", "network.peer.port", "server.address", "network.transport"})
    CHECK(u.count(key) == 0);
}

TEST_CASE("address_text: IPv4-mapped as dotted quad, else IPv6") {
  CHECK(address_text(flow(7, 1, 8, 2).src_addr) == "10.77.0.7");
  Address v6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  CHECK(address_text(v6) == "2001:db8::1");
}

TEST_CASE("sampling keeps whole connections (both directions), about 1 in N, and always negative and at-risk spans") {
  int kept = 0;
  constexpr int kConnections = 4000;
  for (int i = 0; i < kConnections; ++i) {
    auto s = tcp_span(1000, 2000);
    s.socket = flow(1, static_cast<std::uint16_t>(30000 + i), 2, 7000);
    auto reply = s;  // the other direction of the same connection
    std::swap(reply.socket->src_addr, reply.socket->dst_addr);
    std::swap(reply.socket->src_port, reply.socket->dst_port);
    std::swap(reply.src, reply.dst);
    const bool first = keep_span(s, 8);
    CHECK(keep_span(reply, 8) == first);  // one connection: one decision
    kept += first;
    auto negative = s;
    negative.span.recv_ns = 500;
    CHECK(keep_span(negative, 8));
    auto risky = s;
    risky.at_risk = true;
    CHECK(keep_span(risky, 8));
    auto at_risk_state = s;
    at_risk_state.state = PairState::at_risk;
    CHECK(keep_span(at_risk_state, 8));
    auto violated = s;
    violated.state = PairState::violated;
    CHECK(keep_span(violated, 8));
    CHECK(keep_span(s, 1));
  }
  // 1 in 8 of 4000: 500 expected, standard deviation about 21.
  CHECK(kept > 430);
  CHECK(kept < 570);
}

TEST_CASE("sampling without a socket keeps whole streams, and the hash is the same on every run") {
  int kept = 0;
  for (int i = 0; i < 400; ++i) {
    auto s = tcp_span(1000, 2000);
    s.src = "host-" + std::to_string(i);
    const bool first = keep_span(s, 8);
    for (int j = 0; j < 3; ++j) CHECK(keep_span(s, 8) == first);  // one stream: one decision
    kept += first;
  }
  CHECK(kept > 20);  // about 400 / 8 = 50
  CHECK(kept < 90);
  // FNV-1a of fixed bytes: pinned, so a change of the hash (and of which connections every agent
  // keeps) is a visible decision rather than an accident of the standard library.
  auto s = tcp_span(1000, 2000);
  s.socket = flow(1, 40000, 2, 7000);
  // Computed apart from this code (FNV-1a of the two ends, low first, little-endian ports, then
  // the transport byte, then the finalizer), in Python.
  CHECK(connection_hash(s) == 0xf42611062f0ecc4aull);
}

TEST_CASE("skewscope.trusted: a bool when a policy covers the pair, absent when none does") {
  Attributes resource{{"service.name", "skewscope"}};
  std::mt19937_64 ids(3);
  auto uncovered = tcp_span(1000, 2000);
  auto untrusted = tcp_span(1000, 2000);
  untrusted.trusted = false;
  auto trusted = tcp_span(1000, 2000);
  trusted.trusted = true;
  auto request = decode(encode_request({uncovered, untrusted, trusted}, ExportIdentity{resource, "1"}, ids));
  const auto& spans = request.resource_spans(0).scope_spans(0).spans();
  REQUIRE(spans.size() == 3);
  CHECK(attributes(spans[0]).count("skewscope.trusted") == 0);
  auto a = attributes(spans[1]);
  REQUIRE(a.count("skewscope.trusted") == 1);
  CHECK(a["skewscope.trusted"].value_case() == pb::AnyValue::kBoolValue);
  CHECK_FALSE(a["skewscope.trusted"].bool_value());
  CHECK(attributes(spans[2])["skewscope.trusted"].bool_value());
}

TEST_CASE("partial success and gzip") {
  pb::ExportTraceServiceResponse response;
  response.mutable_partial_success()->set_rejected_spans(7);
  CHECK(rejected_spans(response.SerializeAsString()) == 7);
  CHECK(rejected_spans("") == 0);
  CHECK(rejected_spans("\xff\xff\xff") == 0);

  const std::string text(10000, 'x');
  auto zipped = gzip(text);
  REQUIRE(zipped);
  REQUIRE(zipped->size() > 10);
  CHECK(static_cast<unsigned char>((*zipped)[0]) == 0x1f);  // the gzip magic
  CHECK(static_cast<unsigned char>((*zipped)[1]) == 0x8b);
  std::string back(text.size(), '\0');
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(zipped->data());
  z.avail_in = static_cast<uInt>(zipped->size());
  z.next_out = reinterpret_cast<Bytef*>(back.data());
  z.avail_out = static_cast<uInt>(back.size());
  CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
  inflateEnd(&z);
  CHECK(back == text);
}
