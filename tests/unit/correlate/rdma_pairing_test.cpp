#include "correlate/rdma_pairing.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace skewscope;

namespace {

constexpr DomainId kA = 1, kB = 2;
const Address kGidA = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
const Address kGidB = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};

RdmaHalf half(HalfKind kind, RdmaEndpoint at, std::uint64_t ordinal, std::int64_t t_ns) {
  RdmaHalf h;
  h.kind = kind;
  h.local = at;
  h.ordinal = ordinal;
  h.bytes = 100 + static_cast<std::uint32_t>(ordinal);
  h.capture_ns = t_ns;
  h.domain_ns = t_ns;
  return h;
}

// QP 5 in process 10 on host A is connected to QP 9 in process 20 on host B, both ways.
struct Connected {
  RdmaPairing pairing;
  RdmaEndpoint a{kA, 10, 5};
  RdmaEndpoint b{kB, 20, 9};
  Connected() {
    pairing.connect(a, b.qpn, kGidB);
    pairing.connect(b, a.qpn, kGidA);
  }
};

}  // namespace

TEST_CASE("each send pairs with the receive of the same ordinal on the peer QP, both directions") {
  Connected c;
  std::vector<Span> spans;
  for (std::uint64_t i = 0; i < 3; ++i) {
    c.pairing.add(half(HalfKind::send, c.a, i, 1000 + 100 * i), spans);
    c.pairing.add(half(HalfKind::recv, c.b, i, 1050 + 100 * i), spans);
  }
  c.pairing.add(half(HalfKind::send, c.b, 0, 2000), spans);
  c.pairing.add(half(HalfKind::recv, c.a, 0, 2010), spans);
  REQUIRE(spans.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(spans[i].src == kA);
    CHECK(spans[i].dst == kB);
    CHECK(spans[i].transport == Transport::rdma);
    CHECK(spans[i].span_ns() == 50);
    CHECK(spans[i].bytes == 100 + i);
  }
  CHECK(spans[3].src == kB);
  CHECK(spans[3].dst == kA);
  CHECK(spans[3].span_ns() == 10);
  CHECK(c.pairing.pending_sends() == 0);
  CHECK(c.pairing.pending_recvs() == 0);
  CHECK(c.pairing.counters().pairs == 4);
}

TEST_CASE("reordered arrival: receives before their sends, both shuffled, still pair by ordinal") {
  Connected c;
  std::vector<RdmaHalf> halves;
  for (std::uint64_t i = 0; i < 200; ++i) {
    halves.push_back(half(HalfKind::send, c.a, i, 1'000'000 + 1000 * static_cast<std::int64_t>(i)));
    halves.push_back(half(HalfKind::recv, c.b, i, 1'000'000 + 1000 * static_cast<std::int64_t>(i) + 7));
  }
  std::mt19937 rng(16);
  std::shuffle(halves.begin(), halves.end(), rng);
  std::vector<Span> spans;
  for (const auto& h : halves) c.pairing.add(h, spans);
  REQUIRE(spans.size() == 200);
  for (const auto& s : spans) CHECK(s.span_ns() == 7);  // a wrong ordinal would be off by 1000s
  CHECK(c.pairing.counters().duplicates == 0);
}

TEST_CASE("QP reuse: a recycled QPN never pairs with a half of the QP it replaced") {
  Connected c;
  std::vector<Span> spans;
  for (std::uint64_t i = 0; i < 3; ++i) c.pairing.add(half(HalfKind::send, c.a, i, 1000 + i), spans);
  for (std::uint64_t i = 0; i < 2; ++i) c.pairing.add(half(HalfKind::recv, c.b, i, 1100 + i), spans);
  REQUIRE(spans.size() == 2);
  REQUIRE(c.pairing.pending_sends() == 1);  // ordinal 2 never arrived before the QPs went away

  // Both QPs destroyed; new ones get the same numbers and connect to each other again.
  c.pairing.qp_created(c.a);
  c.pairing.qp_created(c.b);
  CHECK(c.pairing.counters().superseded == 1);
  c.pairing.connect(c.a, c.b.qpn, kGidB);
  c.pairing.connect(c.b, c.a.qpn, kGidA);
  spans.clear();
  for (std::uint64_t i = 0; i < 3; ++i) {
    c.pairing.add(half(HalfKind::recv, c.b, i, 5000 + 10 * static_cast<std::int64_t>(i) + 3), spans);
    c.pairing.add(half(HalfKind::send, c.a, i, 5000 + 10 * static_cast<std::int64_t>(i)), spans);
  }
  REQUIRE(spans.size() == 3);
  for (const auto& s : spans) CHECK(s.span_ns() == 3);  // the stale ordinal-2 send (t=1002) is gone
}

TEST_CASE("a reconnect (new RTR) retires the halves of the previous connection") {
  Connected c;
  std::vector<Span> spans;
  c.pairing.add(half(HalfKind::recv, c.b, 0, 100), spans);
  c.pairing.connect(c.b, c.a.qpn, kGidA);
  c.pairing.add(half(HalfKind::send, c.a, 0, 90), spans);
  CHECK(spans.empty());
  CHECK(c.pairing.counters().superseded == 1);
  CHECK(c.pairing.pending_sends() == 1);
}

TEST_CASE("error completions: the failed message's send is counted unpaired, the rest pair") {
  // A receive completion with an error status is no receive half (the kernel side counts it and
  // does not number it): the send of that message waits, then expires as unpaired.
  Connected c;
  std::vector<Span> spans;
  c.pairing.add(half(HalfKind::send, c.a, 0, 1000), spans);
  c.pairing.add(half(HalfKind::send, c.a, 1, 2000), spans);
  c.pairing.add(half(HalfKind::recv, c.b, 0, 1500), spans);
  CHECK(spans.size() == 1);
  c.pairing.expire(2000 + 10'000'000'001);
  CHECK(c.pairing.counters().sends_expired == 1);
  CHECK(c.pairing.pending_sends() == 0);
  CHECK(c.pairing.counters().pairs == 1);
}

TEST_CASE("halves of a QP whose RTR was not seen are counted, not keyed") {
  RdmaPairing p;
  std::vector<Span> spans;
  p.add(half(HalfKind::send, RdmaEndpoint{kA, 1, 2}, 0, 10), spans);
  CHECK(p.counters().no_connection == 1);
  CHECK(p.pending_sends() == 0);
}

TEST_CASE("bounded: a full table refuses and counts") {
  RdmaPairingLimits limits;
  limits.max_pending = 2;
  RdmaPairing p(limits);
  RdmaEndpoint a{kA, 10, 5};
  p.connect(a, 9, kGidB);
  std::vector<Span> spans;
  for (std::uint64_t i = 0; i < 5; ++i) p.add(half(HalfKind::send, a, i, 10), spans);
  CHECK(p.pending_sends() == 2);
  CHECK(p.counters().dropped_table_full == 3);
}
