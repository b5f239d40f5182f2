#include "correlate/correlator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "capture/half_decode.hpp"
#include "synthetic_halves.hpp"

using namespace skewscope;
using skewscope::test::Endpoint;
using skewscope::test::SyntheticStream;

namespace {

Half decoded(const skewscope_half_event& e) {
  auto d = decode_half(e);
  REQUIRE(d);
  Half h = *d;
  h.domain_ns = h.capture_ns;  // one shared clock
  return h;
}

struct Run {
  Correlator correlator;
  std::vector<Span> spans;
  explicit Run(CorrelatorLimits limits = {}) : correlator(limits) {}
  void feed(const std::vector<skewscope_half_event>& events) {
    for (const auto& e : events) correlator.add(decoded(e), spans);
  }
};

SyntheticStream stream(std::uint32_t initial_seq = 1000) {
  return SyntheticStream({1, 40000, 11}, {2, 5555, 22}, initial_seq);
}

}  // namespace

TEST_CASE("a read that holds several writes' first bytes completes each of them (coalesced)") {
  auto s = stream();
  std::vector<skewscope_half_event> ev{s.write(5, 100), s.write(7, 110), s.write(3, 120), s.read(15, 200)};
  Run run;
  run.feed(ev);
  REQUIRE(run.spans.size() == 3);
  CHECK(run.spans[0].span_ns() == 100);
  CHECK(run.spans[1].span_ns() == 90);
  CHECK(run.spans[2].span_ns() == 80);
  CHECK(run.correlator.pending_sends() == 0);
}

TEST_CASE("a write split over several reads pairs with the read holding its first byte (split)") {
  auto s = stream();
  std::vector<skewscope_half_event> ev{s.write(20, 100), s.read(4, 150), s.read(8, 160), s.read(8, 170)};
  Run run;
  run.feed(ev);
  REQUIRE(run.spans.size() == 1);
  CHECK(run.spans[0].span_ns() == 50);
}

TEST_CASE("reads of different sizes than the writes: every write pairs exactly once") {
  // Writes of 5,7,3 and reads of 4,8,3: the numbering seen on a real 6.18 kernel.
  auto s = stream();
  std::vector<skewscope_half_event> ev{s.write(5, 10), s.write(7, 20), s.write(3, 30),
                                       s.read(4, 40),  s.read(8, 50),  s.read(3, 60)};
  Run run;
  run.feed(ev);
  REQUIRE(run.spans.size() == 3);
  CHECK(run.spans[0].span_ns() == 30);  // bytes 0..4 arrive in the first read
  CHECK(run.spans[1].span_ns() == 30);  // byte 5 is in the second read (4..11)
  CHECK(run.spans[2].span_ns() == 30);  // byte 12 is the third read
}

TEST_CASE("pairing does not depend on arrival order") {
  std::mt19937 rng(7);
  auto s = stream();
  std::vector<skewscope_half_event> ev;
  std::int64_t t = 0;
  for (int i = 0; i < 500; ++i) {
    ev.push_back(s.write(1 + rng() % 300, t += 10));
    if (rng() % 3 == 0) ev.push_back(s.read(s.unread() > 1 ? 1 + rng() % s.unread() : s.unread(), t += 5));
  }
  while (s.unread()) ev.push_back(s.read(std::min<std::uint32_t>(s.unread(), 97), t += 5));
  Run in_order;
  in_order.feed(ev);
  std::shuffle(ev.begin(), ev.end(), rng);
  Run shuffled;
  shuffled.feed(ev);
  CHECK(in_order.spans.size() == 500);
  CHECK(shuffled.spans.size() == 500);
  auto key = [](const Span& a) { return std::pair(a.send_ns, a.recv_ns); };
  std::vector<std::pair<std::int64_t, std::int64_t>> a, b;
  for (auto& x : in_order.spans) a.push_back(key(x));
  for (auto& x : shuffled.spans) b.push_back(key(x));
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  CHECK(a == b);
  for (auto& x : shuffled.spans) CHECK(x.span_ns() >= 0);
}

TEST_CASE("interleaved flows do not pair with each other") {
  SyntheticStream ab({1, 40000, 11}, {2, 5555, 22}, 1000);
  SyntheticStream ba({2, 40001, 22}, {1, 5556, 11}, 1000);  // same sequence numbers, other flow
  std::vector<skewscope_half_event> ev{ab.write(10, 100), ba.write(10, 101), ba.read(10, 300), ab.read(10, 200)};
  Run run;
  run.feed(ev);
  REQUIRE(run.spans.size() == 2);
  CHECK(run.spans[0].span_ns() == 199);  // ba: 101 -> 300
  CHECK(run.spans[1].span_ns() == 100);  // ab: 100 -> 200
}

TEST_CASE("sequence numbers wrap around 2^32 without losing pairs") {
  auto s = stream(0xFFFFFFF0u);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < 10; ++i) ev.push_back(s.write(7, 100 + i));
  ev.push_back(s.read(30, 200));  // spans the wrap
  ev.push_back(s.read(40, 210));
  Run run;
  run.feed(ev);
  CHECK(run.spans.size() == 10);
  CHECK(run.correlator.pending_sends() == 0);
}

TEST_CASE("a send arriving after its receive still pairs within the reorder allowance") {
  auto s = stream();
  auto w = s.write(10, 100);
  auto r = s.read(10, 200);
  Run run;
  run.feed({r});
  run.correlator.expire(200 + 500'000'000);  // half a second later: still waiting
  run.feed({w});
  CHECK(run.spans.size() == 1);
}

TEST_CASE("halves age out and are counted by reason") {
  auto s = stream();
  std::vector<skewscope_half_event> ev{s.write(10, 0), s.write(10, 1)};
  auto lone_read = SyntheticStream({3, 1, 33}, {4, 2, 44}, 5).read(10, 2);
  Run run(CorrelatorLimits{100, 1'000, 500});
  run.feed(ev);
  run.feed({lone_read});
  CHECK(run.correlator.pending_sends() == 2);
  CHECK(run.correlator.pending_recvs() == 1);
  run.correlator.expire(600);  // receive older than 500 ns, sends not yet older than 1000
  CHECK(run.correlator.pending_recvs() == 0);
  CHECK(run.correlator.counters().recvs_without_start == 1);
  CHECK(run.correlator.pending_sends() == 2);
  run.correlator.expire(2'000);
  CHECK(run.correlator.pending_sends() == 0);
  CHECK(run.correlator.counters().sends_expired == 2);
  CHECK(run.correlator.flows() == 0);
}

TEST_CASE("the pending tables never exceed max_pending; refusals are counted") {
  auto s = stream();
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < 1000; ++i) ev.push_back(s.write(3, i));
  Run run(CorrelatorLimits{64, 1'000'000, 1'000'000});
  run.feed(ev);
  CHECK(run.correlator.pending_sends() == 64);
  CHECK(run.correlator.counters().dropped_table_full == 1000 - 64);
  CHECK(run.correlator.counters().sends == 1000);
}

TEST_CASE("a paired receive leaves the table at once when every byte of it belongs to a send seen") {
  auto s = stream();
  Run run;
  run.feed({s.write(5, 10), s.write(7, 20), s.read(12, 30)});  // coalesced: both sends start in it
  CHECK(run.spans.size() == 2);
  CHECK(run.correlator.pending_recvs() == 0);
  run.feed({s.write(20, 40), s.read(4, 50), s.read(16, 60)});  // split: the middle starts nothing
  CHECK(run.spans.size() == 3);
  CHECK(run.correlator.pending_recvs() == 0);
  CHECK(run.correlator.pending_sends() == 0);
  CHECK(run.correlator.counters().recvs_without_start == 1);
  // Reordered: the receive arrives first, waits, and leaves when its send arrives.
  auto w = s.write(8, 70);
  run.feed({s.read(8, 80)});
  CHECK(run.correlator.pending_recvs() == 1);
  run.feed({w});
  CHECK(run.spans.size() == 4);
  CHECK(run.correlator.pending_recvs() == 0);
}

TEST_CASE("a receive waits while a send may still start in it: a gap filled late, or closed by time") {
  auto s = stream();
  auto w1 = s.write(10, 10);
  auto w2 = s.write(10, 20);  // its half reaches the agent late
  auto w3 = s.write(10, 30);
  Run run(CorrelatorLimits{1000, 10'000, 1'000});
  run.feed({w1, w3, s.read(10, 40), s.read(10, 50)});
  CHECK(run.spans.size() == 1);  // w1; w2 not seen yet, so the second read waits
  CHECK(run.correlator.pending_recvs() == 1);
  run.feed({w2});  // fills the gap: pairs, and the island w3 joins the covered range
  CHECK(run.spans.size() == 2);
  CHECK(run.correlator.pending_recvs() == 0);
  run.feed({s.read(10, 60)});  // w3's bytes: covered, pairs and leaves at once
  CHECK(run.spans.size() == 3);
  CHECK(run.correlator.pending_sends() == 0);
  CHECK(run.correlator.pending_recvs() == 0);

  // A send that never arrives (lost, or not traced): the receive waits out the allowance.
  auto lost = s.write(10, 100);
  (void)lost;
  run.feed({s.write(10, 110), s.read(10, 120), s.read(10, 130)});
  CHECK(run.spans.size() == 4);
  CHECK(run.correlator.pending_recvs() == 1);
  run.correlator.expire(110 + 1'001);  // the gap is older than the allowance: closed by time
  CHECK(run.correlator.pending_recvs() == 0);
  CHECK(run.correlator.counters().recvs_without_start == 1);
  run.feed({s.write(10, 1'200), s.read(10, 1'210)});  // and the flow pairs on as before
  CHECK(run.spans.size() == 5);
  CHECK(run.correlator.pending_recvs() == 0);
}

TEST_CASE("many flows come and go: every flow still finds its own halves") {
  std::vector<SyntheticStream> flows;
  for (int i = 0; i < 3000; ++i)
    flows.emplace_back(Endpoint{1, static_cast<std::uint16_t>(10000 + i), 11}, Endpoint{2, 5555, 22}, 1000u + i);
  Run run(CorrelatorLimits{100000, 1'000, 1'000});
  // Odd flows send early and age out; even flows send late and stay.
  for (int i = 1; i < 3000; i += 2) run.feed({flows[i].write(10, 0)});
  for (int i = 0; i < 3000; i += 2) run.feed({flows[i].write(10, 5'000)});
  CHECK(run.correlator.flows() == 3000);
  run.correlator.expire(5'500);  // removes the odd flows from the middle of the table
  CHECK(run.correlator.flows() == 1500);
  CHECK(run.correlator.counters().sends_expired == 1500);
  for (int i = 0; i < 3000; i += 2) run.feed({flows[i].read(10, 6'000)});
  CHECK(run.spans.size() == 1500);
  for (const auto& span : run.spans) CHECK(span.span_ns() == 1'000);
  CHECK(run.correlator.pending_sends() == 0);
  CHECK(run.correlator.pending_recvs() == 0);
  run.correlator.expire(6'100);
  CHECK(run.correlator.flows() == 0);
}

TEST_CASE("at a million messages per second the receives do not fill the table") {
  auto s = stream();
  Run run(CorrelatorLimits{4096, 10'000'000'000, 1'000'000'000});
  std::int64_t t = 0;
  for (int i = 0; i < 2'000'000; ++i) {  // 2 s at 1 M msg/s, ticks every 100 ms
    run.feed({s.write(64, t), s.read(64, t + 500)});
    t += 1'000;
    if (i % 100'000 == 0) run.correlator.expire(t);
  }
  CHECK(run.spans.size() == 2'000'000);
  CHECK(run.correlator.counters().dropped_table_full == 0);
  CHECK(run.correlator.pending_recvs() == 0);
}
