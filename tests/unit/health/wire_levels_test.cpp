// Wire halves: decoding, pairing per level, and the pair's health taken from its best level.
#include <doctest/doctest.h>

#include <cstring>

#include "capture/wire_decode.hpp"
#include "correlate/wire_correlator.hpp"
#include "health/level_health.hpp"

using namespace skewscope;

namespace {

skewscope_wire_event segment(std::uint8_t direction, std::uint32_t seq, std::uint32_t bytes, std::uint64_t mono) {
  skewscope_wire_event e{};
  e.mono_ns = mono;
  e.local_addr[15] = direction == SKEWSCOPE_WIRE_EGRESS ? 1 : 2;
  e.remote_addr[15] = direction == SKEWSCOPE_WIRE_EGRESS ? 2 : 1;
  e.local_port = direction == SKEWSCOPE_WIRE_EGRESS ? 40000 : 7000;
  e.remote_port = direction == SKEWSCOPE_WIRE_EGRESS ? 7000 : 40000;
  e.seq = seq;
  e.bytes = bytes;
  e.direction = direction;
  return e;
}

Half with_domain(Half h, DomainId d, std::int64_t ns) {
  h.domain = d;
  h.domain_ns = ns;
  return h;
}

}  // namespace

TEST_CASE("egress and ingress of one segment decode to one directed key") {
  auto out = decode_wire(segment(SKEWSCOPE_WIRE_EGRESS, 1000, 64, 5));
  auto in = decode_wire(segment(SKEWSCOPE_WIRE_INGRESS, 1000, 64, 9));
  REQUIRE(out.value);
  REQUIRE(in.value);
  CHECK(out.value->half.kind == HalfKind::send);
  CHECK(in.value->half.kind == HalfKind::recv);
  CHECK(out.value->half.flow == in.value->half.flow);
  CHECK_FALSE(in.value->skb_realtime_ns);
  auto stamped = segment(SKEWSCOPE_WIRE_INGRESS, 1000, 64, 9);
  stamped.skb_real_ns = 123;
  stamped.hw_ns = 456;
  auto s = decode_wire(stamped);
  CHECK(*s.value->skb_realtime_ns == 123);
  CHECK(*s.value->hardware_ns == 456);
}

TEST_CASE("invalid wire records are rejected with their reason") {
  CHECK(decode_wire(segment(7, 1, 1, 1)).error == WireReject::bad_direction);
  CHECK(decode_wire(segment(SKEWSCOPE_WIRE_EGRESS, 1, 0, 1)).error == WireReject::no_bytes);
  auto no_port = segment(SKEWSCOPE_WIRE_EGRESS, 1, 1, 1);
  no_port.remote_port = 0;
  CHECK(decode_wire(no_port).error == WireReject::no_port);
}

TEST_CASE("software and hardware stamps pair at their own levels, never mixed") {
  WireCorrelator c;
  std::vector<Span> spans;
  Half send = decode_wire(segment(SKEWSCOPE_WIRE_EGRESS, 1000, 64, 5)).value->half;
  Half recv = decode_wire(segment(SKEWSCOPE_WIRE_INGRESS, 1000, 64, 9)).value->half;
  // The send has a hardware stamp, the receive does not: only a software span.
  c.add(with_domain(send, 0, 100), with_domain(send, 0, 90), spans);
  c.add(with_domain(recv, 1, 120), std::nullopt, spans);
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].timestamp_source == TimestampSource::wire_software);
  CHECK(spans[0].span_ns() == 20);
  // Both stamped in hardware: one span per level.
  Half send2 = decode_wire(segment(SKEWSCOPE_WIRE_EGRESS, 1064, 64, 15)).value->half;
  Half recv2 = decode_wire(segment(SKEWSCOPE_WIRE_INGRESS, 1064, 64, 19)).value->half;
  c.add(with_domain(send2, 0, 200), with_domain(send2, 0, 195), spans);
  c.add(with_domain(recv2, 1, 220), with_domain(recv2, 1, 205), spans);
  REQUIRE(spans.size() == 3);
  CHECK(spans[1].timestamp_source == TimestampSource::wire_software);
  CHECK(spans[2].timestamp_source == TimestampSource::wire_hardware);
  CHECK(spans[2].span_ns() == 10);
}

TEST_CASE("a pair's health comes from its best level with spans in the window") {
  estimate::Config config;
  config.window_ns = 10'000'000'000;
  LevelHealth levels(config.window_ns, config);
  Span wire;
  wire.src = 0;
  wire.dst = 1;
  wire.send_ns = 1000;
  wire.recv_ns = 900;  // negative at the wire level
  wire.capture_ns = 1'000'000'000;
  wire.timestamp_source = TimestampSource::wire_software;
  levels.add(wire);
  auto report = levels.report(1'500'000'000, true);
  REQUIRE(report.size() == 1);
  CHECK(report[0].pair.health == 0);

  HealthReport health;
  health.health = 1;
  PairReport syscall;
  syscall.key = PairKey{0, 1, Transport::tcp};
  syscall.health = 1;
  syscall.state = PairState::ok;
  syscall.window.spans = 1;
  health.pairs.push_back(syscall);
  apply_best_levels(health, report);
  CHECK(health.pairs[0].health == 0);
  CHECK(health.pairs[0].state == PairState::violated);
  CHECK(health.health == 0);
  const LevelPair* best = best_level(report, syscall.key);
  REQUIRE(best);
  CHECK(best->source == TimestampSource::wire_software);
  CHECK_FALSE(best_level(report, PairKey{1, 0, Transport::tcp}));
}
