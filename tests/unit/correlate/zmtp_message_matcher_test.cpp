#include "correlate/zmtp_message_matcher.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
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

namespace {

// A run of messages as one side offers it: `count` of `bytes` each from `seq`, one end.
struct OfferedRun {
  HalfKind kind;
  std::uint16_t port;
  std::uint32_t seq, bytes, count;
  std::int64_t stamp;
};

// Each span as the messages it stands for (a run's span is that many spans of one message).
std::vector<Span> per_message(const std::vector<Span>& spans) {
  std::vector<Span> out;
  for (const Span& s : spans)
    for (std::uint32_t i = 0; i < s.messages; ++i) {
      Span one = s;
      one.messages = 1;
      one.bytes = s.bytes / s.messages;
      out.push_back(one);
    }
  return out;
}

bool same_spans(const std::vector<Span>& a, const std::vector<Span>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].src != b[i].src || a[i].dst != b[i].dst || a[i].send_ns != b[i].send_ns || a[i].recv_ns != b[i].recv_ns ||
        a[i].capture_ns != b[i].capture_ns || a[i].bytes != b[i].bytes || a[i].messages != b[i].messages)
      return false;
  return true;
}

}  // namespace

TEST_CASE("zmtp matcher: a run offered at once pairs, waits and is lost exactly as its messages one by one") {
  // Two flows; each side writes (or reads) its stream in runs of 1–40 messages of a few sizes,
  // and loses some runs (a lost payload record): random orders of the two sides, a table bound
  // small enough to fill. The per-message matcher is the reference.
  std::uint64_t rng = 0x2545F4914F6CDD1DULL;
  auto next = [&](std::uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return static_cast<std::uint32_t>(rng % n);
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t room = 1 + next(300);
    std::vector<OfferedRun> sends, recvs;
    for (std::uint16_t port : {1, 2}) {
      std::uint32_t seq = 0xfffff000u + next(0x2000);  // some trials wrap
      std::int64_t stamp = 1000;
      for (int r = 0; r < 30; ++r) {
        const std::uint32_t bytes = 8 + 8 * next(3), count = 1 + next(40);
        // The receiver reads the same bytes in runs cut elsewhere: one to three pieces.
        std::uint32_t left = count, at = seq;
        const bool send_lost = next(10) == 0;
        if (!send_lost) sends.push_back({HalfKind::send, port, seq, bytes, count, stamp});
        while (left > 0) {
          const std::uint32_t piece = 1 + next(left);
          if (next(12) != 0) recvs.push_back({HalfKind::recv, port, at, bytes, piece, stamp + 5 + next(3)});
          at += piece * bytes;
          left -= piece;
        }
        seq += count * bytes;
        stamp += 10;
      }
    }
    // One side's runs in stream order per flow, the two sides interleaved at random.
    std::vector<OfferedRun> order;
    std::size_t s = 0, r = 0;
    while (s < sends.size() || r < recvs.size())
      order.push_back((r == recvs.size() || (s < sends.size() && next(2))) ? sends[s++] : recvs[r++]);
    ZmtpMessageMatcher by_run, by_message;
    std::vector<Span> run_out, message_out;
    for (const OfferedRun& o : order) {
      const DomainId domain = o.kind == HalfKind::send ? 1 : 2;
      const ZmtpMessageEnd end{domain, o.stamp, o.stamp * 7, o.bytes};
      by_run.add_run(o.kind, flow_of(o.port), o.seq, o.count, end, room, run_out);
      for (std::uint32_t i = 0; i < o.count; ++i)
        by_message.add(o.kind, flow_of(o.port), o.seq + i * o.bytes, end, by_message.pending() < room, message_out);
    }
    CAPTURE(trial);
    CHECK(same_spans(per_message(run_out), message_out));
    CHECK(run_out.size() <= message_out.size());
    const ZmtpMatchCounters& a = by_run.counters();
    const ZmtpMatchCounters& b = by_message.counters();
    CHECK(a.sends == b.sends);
    CHECK(a.recvs == b.recvs);
    CHECK(a.pairs == b.pairs);
    CHECK(a.table_full == b.table_full);
    CHECK(a.unpaired_sends == b.unpaired_sends);
    CHECK(a.unpaired_recvs == b.unpaired_recvs);
    CHECK(a.duplicates == b.duplicates);
    CHECK(by_run.pending() == by_message.pending());
    by_run.expire(INT64_MAX);
    by_message.expire(INT64_MAX);
    CHECK(by_run.counters().unpaired_sends == by_message.counters().unpaired_sends);
    CHECK(by_run.counters().unpaired_recvs == by_message.counters().unpaired_recvs);
  }
}

TEST_CASE("zmtp matcher: runs of equal messages pair in one span each, however the two sides cut them") {
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  // 100 sends of 64 B in one write, read in calls of 30 and 70 messages.
  CHECK(m.add_run(HalfKind::send, flow_of(1), 1000, 100, end_at(1, 10, 500, 64), 1000, out) == 0);
  CHECK(m.pending() == 100);
  CHECK(m.add_run(HalfKind::recv, flow_of(1), 1000, 30, end_at(2, 20, 600, 64), 1000, out) == 1);
  CHECK(m.add_run(HalfKind::recv, flow_of(1), 1000 + 30 * 64, 70, end_at(2, 21, 601, 64), 1000, out) == 1);
  REQUIRE(out.size() == 2);
  CHECK(out[0].messages == 30);
  CHECK(out[0].bytes == 30 * 64);
  CHECK(out[0].send_ns == 500);
  CHECK(out[0].recv_ns == 600);
  CHECK(out[1].messages == 70);
  CHECK(out[1].recv_ns == 601);
  CHECK(m.pending() == 0);
  CHECK(m.counters().pairs == 100);
}

TEST_CASE("zmtp matcher: halves of alternating flows pair within their own flow, before and after an expiry") {
  // Request/reply chunks alternate between two directions and more connections join in; the
  // matcher remembers the last flows it served, which an expiry that erases them must forget.
  ZmtpMessageMatcher m;
  std::vector<Span> out;
  const std::uint16_t order[] = {1, 2, 1, 2, 3, 2, 1, 3, 3, 1};
  for (int round = 0; round < 2; ++round) {
    std::uint32_t next_send[4] = {}, next_recv[4] = {};
    out.clear();
    for (std::uint16_t p : order) {
      const std::uint32_t seq = next_send[p];
      next_send[p] += 66;
      CHECK_FALSE(m.add(HalfKind::send, flow_of(p), seq, end_at(p, 100, 10'000 * p + seq), true, out));
    }
    for (auto it = std::rbegin(order); it != std::rend(order); ++it) {
      const std::uint16_t p = *it;
      const std::uint32_t seq = next_recv[p];
      next_recv[p] += 66;
      CHECK(m.add(HalfKind::recv, flow_of(p), seq, end_at(10 + p, 100, 10'000 * p + seq + 7), true, out));
    }
    REQUIRE(out.size() == std::size(order));
    for (const Span& s : out) {
      const auto p = static_cast<std::int64_t>(s.src);
      CHECK(s.dst == 10 + s.src);
      CHECK(s.recv_ns - s.send_ns == 7);
      CHECK(s.send_ns / 10'000 == p);
    }
    CHECK(m.pending() == 0);
    m.expire(1'000);  // every flow is empty now: all are erased
    CHECK(m.flows() == 0);
  }
  CHECK(m.counters().pairs == 2 * std::size(order));
}
