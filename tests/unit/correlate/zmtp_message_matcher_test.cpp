#include "correlate/zmtp_message_matcher.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace skewscope;

namespace {

FlowKey flow_of(std::uint16_t src_port) {
  FlowKey f;
  f.src_addr[15] = 1;
  f.dst_addr[15] = 2;
  f.src_port = src_port;
  f.dst_port = 5555;
  return f;
}

ZmtpMessageEnd end_at(DomainId domain, std::int64_t age_ns, std::int64_t time_ns = 0, std::uint32_t bytes = 66) {
  return {domain, age_ns, time_ns == 0 ? age_ns : time_ns, bytes};
}

}  // namespace

TEST_CASE("zmtp matcher: a message pairs whichever half comes first, once") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  CHECK_FALSE(m.add(HalfKind::recv, flow_of(1), 100, end_at(2, 50, 700), true, out));
  CHECK(m.add(HalfKind::send, flow_of(1), 100, end_at(1, 40, 600, 66), true, out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].src == 1);
  CHECK(out[0].dst == 2);
  CHECK(out[0].send_ns == 600);
  CHECK(out[0].recv_ns == 700);
  CHECK(out[0].bytes == 66);
  CHECK(m.pending() == 0);
  // Another flow with the same sequence number is another message.
  CHECK_FALSE(m.add(HalfKind::send, flow_of(2), 100, end_at(1, 41), true, out));
  CHECK(m.pending() == 1);
  m.expire(1000);
  CHECK(m.counters().pairs == 1);
  CHECK(m.counters().unpaired_sends == 1);
  CHECK(m.counters().unpaired_recvs == 0);
  CHECK(m.pending() == 0);
}

TEST_CASE("zmtp matcher: expiry counts only the halves older than the cutoff, each once") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  for (std::uint32_t i = 0; i < 10; ++i) m.add(HalfKind::send, flow_of(1), i * 66, end_at(1, 100 + i), true, out);
  for (std::uint32_t i = 0; i < 4; ++i) m.add(HalfKind::recv, flow_of(3), i * 66, end_at(2, 100 + i), true, out);
  m.expire(105);  // sends 0..4 and receives 0..3 are older
  CHECK(m.counters().unpaired_sends == 5);
  CHECK(m.counters().unpaired_recvs == 4);
  CHECK(m.pending() == 5);
  m.expire(105);  // nothing more is older: nothing counted twice
  CHECK(m.counters().unpaired_sends == 5);
  // The young halves still pair.
  CHECK(m.add(HalfKind::recv, flow_of(1), 9 * 66, end_at(2, 200), true, out));
  m.expire(1000);
  CHECK(m.counters().unpaired_sends == 9);
  CHECK(m.counters().pairs == 1);
  CHECK(m.pending() == 0);
  CHECK(m.flows() == 0);
}

TEST_CASE("zmtp matcher: a duplicate replaces the first half, which is not counted unpaired again") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  m.add(HalfKind::send, flow_of(1), 7, end_at(1, 10), true, out);
  m.add(HalfKind::send, flow_of(1), 7, end_at(1, 20), true, out);
  CHECK(m.counters().duplicates == 1);
  m.expire(15);  // the waiting half is the second, still young
  CHECK(m.counters().unpaired_sends == 0);
  CHECK(m.pending() == 1);
  m.expire(25);
  CHECK(m.counters().unpaired_sends == 1);
  CHECK(m.pending() == 0);
}

TEST_CASE("zmtp matcher: an older half behind a younger one ages when the younger one goes") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  m.add(HalfKind::send, flow_of(1), 0, end_at(1, 300), true, out);  // arrived first, younger
  m.add(HalfKind::send, flow_of(1), 66, end_at(1, 100), true, out);
  m.expire(200);
  CHECK(m.counters().unpaired_sends == 0);  // waits behind the younger half, as documented
  m.expire(400);
  CHECK(m.counters().unpaired_sends == 2);
}

TEST_CASE("zmtp matcher: a half the other side has passed is counted unpaired at once") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  for (std::uint32_t i = 0; i < 5; ++i) m.add(HalfKind::send, flow_of(1), i * 66, end_at(1, 10 + i), true, out);
  // The receives of messages 0 and 1 were lost (a full payload ring): message 2's receive pairs,
  // and the sends before it cannot pair any more.
  CHECK(m.add(HalfKind::recv, flow_of(1), 2 * 66, end_at(2, 20), true, out));
  CHECK(m.counters().unpaired_sends == 2);
  CHECK(m.pending() == 2);
  CHECK(m.add(HalfKind::recv, flow_of(1), 3 * 66, end_at(2, 21), true, out));
  CHECK(m.add(HalfKind::recv, flow_of(1), 4 * 66, end_at(2, 22), true, out));
  CHECK(m.pending() == 0);
  // Receives first this time, and the send of message 5 lost: message 6's send passes it.
  m.add(HalfKind::recv, flow_of(1), 5 * 66, end_at(2, 23), true, out);
  m.add(HalfKind::recv, flow_of(1), 6 * 66, end_at(2, 24), true, out);
  CHECK(m.add(HalfKind::send, flow_of(1), 6 * 66, end_at(1, 25), true, out));
  CHECK(m.counters().unpaired_recvs == 1);
  // A half behind what the other side already waits with: its other half was lost too.
  m.add(HalfKind::recv, flow_of(1), 9 * 66, end_at(2, 26), true, out);
  CHECK_FALSE(m.add(HalfKind::send, flow_of(1), 8 * 66, end_at(1, 27), true, out));
  CHECK(m.counters().unpaired_sends == 3);
  CHECK(m.pending() == 1);
  CHECK(m.counters().pairs == 4);
  CHECK(out.size() == 4);
  CHECK(m.counters().unpaired_recvs == 1);
}

TEST_CASE("zmtp matcher: sequence numbers that wrap pair in order") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  std::uint32_t seq = 0xffffff00u;
  for (int i = 0; i < 10; ++i, seq += 66) m.add(HalfKind::send, flow_of(1), seq, end_at(1, 10 + i), true, out);
  seq = 0xffffff00u;
  for (int i = 0; i < 10; ++i, seq += 66) CHECK(m.add(HalfKind::recv, flow_of(1), seq, end_at(2, 30 + i), true, out));
  CHECK(m.counters().unpaired_sends == 0);
  CHECK(m.pending() == 0);
}

TEST_CASE("zmtp matcher: a half out of its side's order waits in order; a flow with nothing waiting goes") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  m.add(HalfKind::send, flow_of(1), 132, end_at(1, 12), true, out);
  m.add(HalfKind::send, flow_of(1), 0, end_at(1, 10), true, out);
  m.add(HalfKind::send, flow_of(1), 66, end_at(1, 11), true, out);
  CHECK(m.pending() == 3);
  for (std::uint32_t i = 0; i < 3; ++i) CHECK(m.add(HalfKind::recv, flow_of(1), i * 66, end_at(2, 20), true, out));
  CHECK(m.flows() == 1);
  m.expire(5);
  CHECK(m.flows() == 0);
  CHECK(m.counters().pairs == 3);
}

TEST_CASE("zmtp matcher: without room a half that would wait is counted, not kept") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  CHECK_FALSE(m.add(HalfKind::send, flow_of(1), 0, end_at(1, 10), false, out));
  CHECK(m.counters().table_full == 1);
  CHECK(m.pending() == 0);
}

TEST_CASE("zmtp matcher: a full table's largest flow gives way to a smaller flow's halves") {
  // Flow 1's sends wait for receives that never come (its receiver lost sync): 100 of them fill
  // the budget the caller has (room false from here on).
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  for (std::uint32_t i = 0; i < 100; ++i) m.add(HalfKind::send, flow_of(1), i * 66, end_at(1, 100 + i), true, out);
  // Flow 2's messages still wait and pair: each takes the place of flow 1's oldest send.
  for (std::uint32_t i = 0; i < 3; ++i)
    CHECK_FALSE(m.add(HalfKind::send, flow_of(2), i * 66, end_at(1, 300 + i), false, out));
  CHECK(m.pending() == 100);
  CHECK(m.counters().table_full == 3);  // flow 1's sends at 0, 66 and 132: lost for want of room
  for (std::uint32_t i = 0; i < 3; ++i)
    CHECK(m.add(HalfKind::recv, flow_of(2), i * 66, end_at(2, 400 + i), false, out));
  CHECK(out.size() == 3);
  CHECK(m.pending() == 97);
  // Flow 1 itself, the largest, cannot push anyone out: its next send is refused.
  CHECK_FALSE(m.add(HalfKind::send, flow_of(1), 100 * 66, end_at(1, 500), false, out));
  CHECK(m.counters().table_full == 4);
  CHECK(m.pending() == 97);
  // Its oldest waiting send is now the one at 3 * 66: the three crowded out are not counted again.
  CHECK(m.add(HalfKind::recv, flow_of(1), 3 * 66, end_at(2, 501), false, out));
  CHECK(m.counters().unpaired_sends == 0);
  m.expire(1'000);
  CHECK(m.counters().unpaired_sends == 96);
  CHECK(m.pending() == 0);
}

TEST_CASE("zmtp matcher: flows of equal size do not crowd each other out") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  for (std::uint16_t f = 1; f <= 4; ++f)
    for (std::uint32_t i = 0; i < 10; ++i) m.add(HalfKind::send, flow_of(f), i * 66, end_at(1, 100 + i), true, out);
  // A flow may take a place from one that waits with more than it would with the half: 10 > 10 + 1 is not.
  for (std::uint16_t f = 1; f <= 4; ++f)
    CHECK_FALSE(m.add(HalfKind::send, flow_of(f), 10 * 66, end_at(1, 200), false, out));
  CHECK(m.counters().table_full == 4);
  CHECK(m.pending() == 40);
  // A new flow, with nothing waiting, may (10 > 0 + 1), once per half, from one of the largest.
  CHECK_FALSE(m.add(HalfKind::send, flow_of(5), 0, end_at(1, 300), false, out));
  CHECK(m.counters().table_full == 5);
  CHECK(m.pending() == 40);
  CHECK(m.flows() == 5);
}

TEST_CASE("zmtp matcher: crowding out follows the largest flow as it shrinks") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  for (std::uint32_t i = 0; i < 8; ++i) m.add(HalfKind::send, flow_of(1), i * 66, end_at(1, 100 + i), true, out);
  for (std::uint32_t i = 0; i < 6; ++i) m.add(HalfKind::recv, flow_of(2), i * 66, end_at(2, 100 + i), true, out);
  // Flow 3 takes from flow 1 while flow 1 waits with more than flow 3 would (8 -> 4), then from
  // flow 2, the largest at the next scan (6 -> 5); its sixth half finds no flow larger than 6 and
  // is refused.
  for (std::uint32_t i = 0; i < 5; ++i)
    CHECK_FALSE(m.add(HalfKind::send, flow_of(3), i * 66, end_at(1, 200 + i), false, out));
  CHECK(m.pending() == 14);
  CHECK_FALSE(m.add(HalfKind::send, flow_of(3), 5 * 66, end_at(1, 205), false, out));
  CHECK(m.counters().table_full == 6);
  CHECK(m.pending() == 14);
  // Flow 2's oldest receive (at 0) went: a send at 0 finds its oldest at 66 and is passed.
  CHECK_FALSE(m.add(HalfKind::send, flow_of(2), 0, end_at(1, 300), true, out));
  CHECK(m.counters().unpaired_sends == 1);
  CHECK(m.add(HalfKind::send, flow_of(2), 66, end_at(1, 301), true, out));
  CHECK(m.pending() == 13);
  m.expire(1'000);
  CHECK(m.counters().unpaired_sends + m.counters().unpaired_recvs == 1 + 13);
}

TEST_CASE("zmtp matcher: repeated expiries of a full table age exactly the older halves") {
  // 200 000 halves wait, then a thousand expiries that age none (each stops at the front).
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  for (std::uint32_t i = 0; i < 200'000; ++i)
    m.add(HalfKind::send, flow_of(1), i * 66, end_at(1, 1'000 + i), true, out);
  for (int t = 0; t < 1000; ++t) m.expire(500);
  CHECK(m.pending() == 200'000);
  m.expire(1'000 + 100'000);
  CHECK(m.counters().unpaired_sends == 100'000);
  CHECK(m.pending() == 100'000);
}

TEST_CASE("zmtp matcher: a moved matcher keeps its waiting halves; the moved-from one starts empty") {
  ZmtpMessageMatcher a;
  std::vector<Span> out;
  a.add(HalfKind::send, flow_of(1), 0, end_at(1, 10), true, out);
  ZmtpMessageMatcher b = std::move(a);
  CHECK(b.add(HalfKind::recv, flow_of(1), 0, end_at(2, 20), true, out));
  a = ZmtpMessageMatcher{};
  CHECK_FALSE(a.add(HalfKind::recv, flow_of(1), 66, end_at(2, 21), true, out));
  CHECK(a.pending() == 1);
  CHECK(b.pending() == 0);
}

TEST_CASE("zmtp waiting side: halves of one end share a run, each keeps its size, order is kept") {
  ZmtpWaitingSide side;
  // Two chunks of three messages (one end each), then one out of order inside the first run.
  for (std::uint32_t i = 0; i < 3; ++i) side.push_back(100 + 10 * i, end_at(1, 5, 0, 10 + i));
  for (std::uint32_t i = 0; i < 3; ++i) side.push_back(200 + 10 * i, end_at(1, 9, 0, 20 + i));
  CHECK(side.insert_in_order(115, end_at(1, 7, 0, 99)));
  CHECK_FALSE(side.insert_in_order(200, end_at(1, 8, 0, 98)));  // same message: replaces it
  const std::vector<std::pair<std::uint32_t, ZmtpMessageEnd>> want = {
      {100, end_at(1, 5, 0, 10)}, {110, end_at(1, 5, 0, 11)}, {115, end_at(1, 7, 0, 99)}, {120, end_at(1, 5, 0, 12)},
      {200, end_at(1, 8, 0, 98)}, {210, end_at(1, 9, 0, 21)}, {220, end_at(1, 9, 0, 22)}};
  CHECK(side.size() == want.size());
  for (const auto& [seq, end] : want) {
    REQUIRE_FALSE(side.empty());
    CHECK(side.front_seq() == seq);
    CHECK(side.front_age_ns() == end.age_ns);
    CHECK(side.front().time_ns == end.time_ns);
    CHECK(side.front().bytes == end.bytes);
    side.pop_front();
  }
  CHECK(side.empty());
}
