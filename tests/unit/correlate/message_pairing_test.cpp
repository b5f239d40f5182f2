#include "correlate/message_pairing.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "capture/payload_decode.hpp"
#include "zmtp_stream_bytes.hpp"

using namespace skewscope;
using skewscope::test::zmtp_stream;

namespace {

// One direction's calls: the stream cut at `cuts`; sender's and receiver's records of one flow.
std::vector<PayloadRecord> records(const std::vector<std::uint8_t>& stream, std::vector<std::size_t> sizes,
                                   std::uint8_t kind, std::uint64_t ts0, std::uint32_t capture_limit = 8192) {
  std::vector<PayloadRecord> out;
  std::size_t at = 0, i = 0;
  const std::uint32_t isn = 0xfffff000u;  // wraps inside the stream
  while (at < stream.size()) {
    const std::size_t n = std::min(sizes[i++ % sizes.size()], stream.size() - at);
    PayloadRecord r;
    auto& h = r.header;
    h.ts_ns = ts0 + at * 10;
    const std::uint8_t a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    const std::uint8_t b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
    const bool send = kind == SKEWSCOPE_HALF_SEND;
    std::memcpy(h.local_addr, send ? a : b, 16);
    std::memcpy(h.remote_addr, send ? b : a, 16);
    h.local_port = send ? 40000 : 5555;
    h.remote_port = send ? 5555 : 40000;
    h.seq = isn + static_cast<std::uint32_t>(at);
    h.bytes = static_cast<std::uint32_t>(n);
    h.kind = kind;
    h.protocol = SKEWSCOPE_PROTO_ZMTP;
    const std::size_t kept = std::min<std::size_t>(n, capture_limit);
    h.captured_len = static_cast<std::uint32_t>(kept);
    r.bytes.assign(stream.begin() + static_cast<long>(at), stream.begin() + static_cast<long>(at + kept));
    out.push_back(std::move(r));
    at += n;
  }
  return out;
}

struct Run {
  MessagePairing pairing;
  std::vector<Span> spans{};
  std::vector<MessageSpanInfo> info{};
  // Messages paired: a span stands for Span::messages of them (a run that shares both stamps).
  std::uint64_t messages() const {
    std::uint64_t n = 0;
    for (const auto& s : spans) n += s.messages;
    return n;
  }
  void feed(const std::vector<PayloadRecord>& recs, DomainId domain) {
    for (const auto& r : recs) feed_one(r, domain);
  }
  // A sender's (domain 1) and a receiver's (domain 2) records in the payload ring's order: by stamp.
  void feed_in_stamp_order(const std::vector<PayloadRecord>& sends, const std::vector<PayloadRecord>& recvs) {
    std::vector<std::pair<const PayloadRecord*, DomainId>> order;
    for (const auto& r : sends) order.emplace_back(&r, 1);
    for (const auto& r : recvs) order.emplace_back(&r, 2);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first->header.ts_ns < b.first->header.ts_ns; });
    for (const auto& [record, domain] : order) feed_one(*record, domain);
  }
  void feed_one(const PayloadRecord& r, DomainId domain) {
    auto d = decode_payload(r);
    REQUIRE(d);
    d->half.domain = domain;
    pairing.add(
        *d, [](DomainId, std::int64_t ns) { return ns; }, spans, info);
  }
  void expire(std::int64_t now_ns) {
    pairing.expire(
        now_ns, [](DomainId, std::int64_t ns) { return ns; }, spans, info);
  }
};

}  // namespace

TEST_CASE("zmtp: many messages coalesced per write, read in other sizes: one span per message") {
  auto stream = zmtp_stream(500, 8);
  Run run;
  run.feed(records(stream, {1000, 37, 2048}, SKEWSCOPE_HALF_SEND, 1'000'000), 1);
  run.feed(records(stream, {13, 4096, 1}, SKEWSCOPE_HALF_RECV, 2'000'000), 2);
  CHECK(run.messages() == 500);
  CHECK(run.pairing.counters().zmtp_pairs == 500);
  CHECK(run.pairing.pending() == 0);
  for (const auto& s : run.spans) {
    CHECK(s.transport == Transport::zmtp);
    CHECK(s.src == 1);
    CHECK(s.dst == 2);
    CHECK(s.span_ns() > 0);
    CHECK(s.bytes == 10 * s.messages);
  }
  // One span per run of messages that one write sent and one read received: as many as there are
  // (write of the first byte, read of the last byte) pairs, taken message by message.
  auto call_of = [&](std::size_t byte, std::vector<std::size_t> sizes) {
    std::size_t end = 0, call = 0;
    while ((end += sizes[call % sizes.size()]) <= byte) ++call;
    return call;
  };
  std::size_t runs = 0;
  std::pair<std::size_t, std::size_t> last{SIZE_MAX, SIZE_MAX};
  for (std::size_t m = 0; m < 500; ++m) {
    const std::size_t first = 72 + 10 * m;  // greeting and READY, then 2 + 8 bytes a message
    const std::pair calls{call_of(first, {1000, 37, 2048}), call_of(first + 9, {13, 4096, 1})};
    if (calls != last) ++runs;
    last = calls;
  }
  CHECK(runs < 20);
  CHECK(run.spans.size() == runs);
  CHECK(run.info.size() == run.spans.size());
}

TEST_CASE("zmtp: receives before sends (another CPU's ring order) pair the same") {
  auto stream = zmtp_stream(50, 3);
  Run run;
  run.feed(records(stream, {7}, SKEWSCOPE_HALF_RECV, 2'000'000), 2);
  run.feed(records(stream, {100}, SKEWSCOPE_HALF_SEND, 1'000'000), 1);
  CHECK(run.messages() == 50);
}

TEST_CASE("zmtp: a message whose header is beyond the captured prefix is lost and counted, not guessed") {
  auto stream = zmtp_stream(200, 8);
  Run run;
  // The sender's writes are captured only up to 100 bytes of each 1000-byte write.
  run.feed(records(stream, {1000}, SKEWSCOPE_HALF_SEND, 1'000'000, 100), 1);
  run.feed(records(stream, {1000}, SKEWSCOPE_HALF_RECV, 2'000'000), 2);
  CHECK(run.messages() < 200);
  CHECK(run.pairing.counters().parser_sync_losses > 0);
  run.expire(1'000'000'000'000);
  CHECK(run.pairing.counters().unpaired_recvs > 0);
  CHECK(run.pairing.pending() == 0);
}

TEST_CASE("payload decode: inconsistent records are rejected with a reason") {
  auto recs = records(zmtp_stream(1, 4), {100}, SKEWSCOPE_HALF_SEND, 1);
  PayloadRecord r = recs.front();
  r.header.protocol = 9;
  CHECK(decode_payload(r).error == PayloadReject::bad_protocol);
  r = recs.front();
  r.header.captured_len = r.header.bytes + 1;
  CHECK(decode_payload(r).error == PayloadReject::bad_length);
  r = recs.front();
  r.bytes.pop_back();
  CHECK(decode_payload(r).error == PayloadReject::bad_length);
  r = recs.front();
  r.header.kind = 7;
  CHECK(decode_payload(r).error == PayloadReject::bad_kind);
  r = recs.front();
  r.header.remote_port = 0;
  CHECK(decode_payload(r).error == PayloadReject::zero_port);
  CHECK(decode_payload(recs.front()).value);
}

TEST_CASE("the pending table is bounded: halves beyond it are counted") {
  auto stream = zmtp_stream(100, 2);
  MessagePairingLimits limits;
  limits.max_pending = 10;
  Run run{MessagePairing(limits)};
  run.feed(records(stream, {4096}, SKEWSCOPE_HALF_SEND, 1), 1);
  CHECK(run.pairing.pending() == 10);
  CHECK(run.pairing.counters().dropped_table_full == 90);
}

TEST_CASE("zmtp: a stream that is not parsed is counted by reason and named, once") {
  // Version byte 0 (ZMTP 1.0 framing): unsupported; a stream first seen mid-stream: not a greeting.
  auto old = zmtp_stream(20, 4);
  old[10] = 0;
  Run run;
  run.feed(records(old, {30}, SKEWSCOPE_HALF_SEND, 1'000'000), 1);
  auto late = zmtp_stream(20, 4);
  late.erase(late.begin(), late.begin() + 80);  // starts inside the messages
  run.feed(records(late, {30}, SKEWSCOPE_HALF_RECV, 2'000'000), 2);
  const MessagePairingCounters c = run.pairing.counters();
  CHECK(run.spans.empty());
  CHECK(c.zmtp_send_messages + c.zmtp_recv_messages == 0);
  using protocols::zmtp::UnparsedReason;
  CHECK(c.zmtp_unparsed_streams[static_cast<std::size_t>(UnparsedReason::kUnsupportedVersion)] == 1);
  CHECK(c.zmtp_unparsed_streams[static_cast<std::size_t>(UnparsedReason::kNotAGreeting)] == 1);
  REQUIRE(c.zmtp_unparsed_recent.size() == 2);
  CHECK(c.zmtp_unparsed_recent[0].domain == 1);
  CHECK(c.zmtp_unparsed_recent[0].kind == HalfKind::send);
  CHECK(c.zmtp_unparsed_recent[0].flow.src_port == 40000);
  CHECK(c.zmtp_unparsed_recent[0].reason == UnparsedReason::kUnsupportedVersion);
  CHECK(c.zmtp_unparsed_recent[1].domain == 2);
  CHECK(c.zmtp_unparsed_recent[1].reason == UnparsedReason::kNotAGreeting);
  CHECK(c.zmtp_streams_v3 + c.zmtp_streams_v2 == 0);
}

TEST_CASE("zmtp: parsed streams are counted by the framing they settled on") {
  auto stream = zmtp_stream(10, 4);
  Run run;
  run.feed(records(stream, {64, 100}, SKEWSCOPE_HALF_SEND, 1'000'000), 1);
  run.feed(records(stream, {64, 100}, SKEWSCOPE_HALF_RECV, 2'000'000), 2);
  CHECK(run.pairing.counters().zmtp_streams_v3 == 2);
  CHECK(run.pairing.counters().zmtp_streams_v2 == 0);
  CHECK(run.messages() == 10);
}

TEST_CASE("zmtp: a receiver that lost a chunk resumes at a message start its local sender proved") {
  // 2 000 messages of 10 bytes on the wire; writes of 1 000 bytes and reads of 1 500 both end
  // mid-message, so no read ever starts at a frame: alone, the receiver would never resync.
  auto stream = zmtp_stream(2000, 8);
  const auto sends = records(stream, {1000}, SKEWSCOPE_HALF_SEND, 1'000'000);
  // A read is stamped 20 µs after the write of its first byte: after the write of its last.
  auto recvs = records(stream, {1500}, SKEWSCOPE_HALF_RECV, 1'020'000);
  recvs.erase(recvs.begin() + 4);  // one read's record lost (a full payload ring)
  Run run;
  run.feed_in_stamp_order(sends, recvs);
  auto c = run.pairing.counters();  // a copy: read again after each expire
  CHECK(c.parser_sync_losses == 1);
  CHECK(c.parser_resyncs_from_other_end == 1);
  // Lost: the 150 messages with a byte in the lost read, and those before the next start the
  // sender kept (one per write, until asked: up to 100 more). The rest pair.
  CHECK(run.messages() < 2000);
  CHECK(run.messages() >= 2000 - 150 - 100 - 1);
  for (const auto& s : run.spans) CHECK(s.span_ns() > 0);
  run.expire(1'000'000'000'000);
  c = run.pairing.counters();
  CHECK(c.unpaired_recvs == 0);  // the receiver reported no message its sender did not send
  CHECK(c.unpaired_sends == 2000 - run.messages());
}

TEST_CASE("zmtp: without a local sender a receiver that lost a chunk stays out of sync") {
  auto stream = zmtp_stream(2000, 8);
  auto recvs = records(stream, {1500}, SKEWSCOPE_HALF_RECV, 1'000'500);
  recvs.erase(recvs.begin() + 4);
  Run run;
  run.feed(recvs, 2);
  CHECK(run.pairing.counters().parser_sync_losses == 1);
  CHECK(run.pairing.counters().parser_resyncs_from_other_end == 0);
  CHECK(run.pairing.counters().zmtp_recv_messages < 6000 / 10);
}

TEST_CASE("zmtp: a sender that lost a chunk holds its calls until its local receiver proves a start") {
  auto stream = zmtp_stream(2000, 8);
  auto sends = records(stream, {1000}, SKEWSCOPE_HALF_SEND, 1'000'000);
  const auto recvs = records(stream, {1500}, SKEWSCOPE_HALF_RECV, 1'020'000);
  sends.erase(sends.begin() + 4);  // one write's record lost: bytes 4 000 to 5 000
  Run run;
  run.feed_in_stamp_order(sends, recvs);
  auto c = run.pairing.counters();  // a copy: read again after each expire
  CHECK(c.parser_sync_losses == 1);
  CHECK(c.parser_resyncs_from_other_end == 1);
  // Lost: the 100 messages with a byte in the lost write, and the one the next write ends.
  CHECK(run.messages() < 2000);
  CAPTURE(c.zmtp_send_messages);
  CAPTURE(c.zmtp_recv_messages);
  CHECK(run.messages() >= 2000 - 100 - 2);
  for (const auto& s : run.spans) CHECK(s.span_ns() > 0);
  run.expire(1'000'000'000'000);
  c = run.pairing.counters();
  CHECK(c.unpaired_sends == 0);  // the sender reported no message its receiver did not get
  CHECK(c.unpaired_recvs == 2000 - run.messages());
}

TEST_CASE("zmtp: a sender holding its calls for a receiver that went quiet lets them go at expiry") {
  auto stream = zmtp_stream(2000, 8);
  auto sends = records(stream, {1000}, SKEWSCOPE_HALF_SEND, 1'000'000);
  auto recvs = records(stream, {1500}, SKEWSCOPE_HALF_RECV, 1'020'000);
  sends.erase(sends.begin() + 4);  // one write's record lost: bytes 4 000 to 5 000
  recvs.resize(3);                 // the receiver reads bytes 0 to 4 500, then nothing
  Run run;
  run.feed_in_stamp_order(sends, recvs);
  auto c = run.pairing.counters();
  const std::uint64_t before = c.zmtp_send_messages;
  CHECK(before < 400);  // the writes after the loss wait for a proof that does not come
  CHECK(c.parser_sync_losses == 0);
  const std::int64_t last = static_cast<std::int64_t>(sends.back().header.ts_ns);
  run.expire(last + 500'000'000);  // within the hold: they still wait
  c = run.pairing.counters();
  CHECK(c.parser_sync_losses == 0);
  // Past it they go on unproven, as at the next chunk: the sender, whose writes start mid-message,
  // loses sync there and says so (held until the stream was dropped as idle, they were lost
  // uncounted), and reports no message it cannot frame.
  run.expire(last + 1'500'000'000);
  c = run.pairing.counters();
  CHECK(c.parser_sync_losses == 1);
  CHECK(c.zmtp_send_messages == before);
  run.expire(1'000'000'000'000);
  c = run.pairing.counters();
  CHECK(c.unpaired_sends == c.zmtp_send_messages - run.messages());
  CHECK(c.unpaired_recvs == c.zmtp_recv_messages - run.messages());  // the lost write's, read
}

TEST_CASE("zmtp: both ends out of sync after one burst of lost records recover, receiver first") {
  auto stream = zmtp_stream(2000, 8);
  auto sends = records(stream, {1000}, SKEWSCOPE_HALF_SEND, 1'000'000);
  auto recvs = records(stream, {1500}, SKEWSCOPE_HALF_RECV, 1'020'000);
  // The same instant's records of both ends: the write of bytes 6 000 to 7 000 (stamped 1.06 ms)
  // and the read of 3 000 to 4 500 (stamped 1.05 ms), the reader two calls behind.
  sends.erase(sends.begin() + 6);
  recvs.erase(recvs.begin() + 2);
  Run run;
  run.feed_in_stamp_order(sends, recvs);
  auto c = run.pairing.counters();  // a copy: read again after each expire
  CAPTURE(c.zmtp_send_messages);
  CAPTURE(c.zmtp_recv_messages);
  CHECK(c.parser_sync_losses == 2);
  CHECK(c.parser_resyncs_from_other_end == 2);
  // Lost: the 100 messages of the lost write and the 150 of the lost read; the receiver resumes at
  // the next start the sender kept from before its own loss (one per write: up to 100 more), the
  // sender at the next of the receiver's (every start, once asked: one more).
  CHECK(c.zmtp_send_messages >= 2000 - 100 - 1);
  CHECK(c.zmtp_recv_messages >= 2000 - 150 - 100);
  CHECK(run.messages() >= 2000 - 100 - 150 - 100 - 1);
  for (const auto& s : run.spans) CHECK(s.span_ns() > 0);
  run.expire(1'000'000'000'000);
  c = run.pairing.counters();
  CHECK(c.unpaired_sends + c.unpaired_recvs + run.messages() * 2 == c.zmtp_send_messages + c.zmtp_recv_messages);
}

namespace {

// The receiver's calls as one agent following both ends sees them with one copy for both ends:
// the calls that start in the first 64 bytes (the greeting) copied, the others as mirrored halves
// (no bytes). Fed to `run` with the sender's records as the payload ring orders them: the
// sender's greeting, then the receiver's copied calls (a sender writes no message before its
// peer has read its greeting and answered), then the rest: the sender's first, the receiver's
// first, or by stamp.
// receiver_swapped: by stamp, and each two of the receiver's calls in turn arrive the later first
// (its thread moved CPU between them: the agent reads one CPU's half ring, then the other's).
// mirrored_ahead: the receiver's mirrored calls (half rings) before every payload record (the
// payload ring read later), which then come as the ring has them: each receiver's copied call
// after the sender's writes of the bytes it read. Its stream exists only through the mirrored
// calls until its copied calls come.
enum class Order { sender_ahead, receiver_ahead, by_stamp, receiver_swapped, mirrored_ahead };
void feed_mirrored(Run& run, const std::vector<PayloadRecord>& sends, const std::vector<PayloadRecord>& recvs,
                   Order order) {
  const auto clock = [](DomainId, std::int64_t ns) { return ns; };
  const std::uint32_t first_byte = sends.front().header.seq;
  const auto copied = [&](const PayloadRecord& r) { return r.header.seq - first_byte < 64; };
  std::vector<std::pair<const PayloadRecord*, DomainId>> head, rest;
  head.emplace_back(&sends.front(), 1);
  for (const auto& r : recvs) (copied(r) ? head : rest).emplace_back(&r, 2);
  for (std::size_t i = 1; i < sends.size(); ++i) rest.emplace_back(&sends[i], 1);
  if (order == Order::sender_ahead)
    std::stable_partition(rest.begin(), rest.end(), [](const auto& r) { return r.second == 1; });
  if (order == Order::by_stamp || order == Order::receiver_swapped)
    std::stable_sort(rest.begin(), rest.end(),
                     [](const auto& a, const auto& b) { return a.first->header.ts_ns < b.first->header.ts_ns; });
  if (order == Order::receiver_swapped) {
    std::size_t previous = SIZE_MAX;
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest[i].second != 2) continue;
      if (previous == SIZE_MAX) {
        previous = i;
      } else {
        std::swap(rest[previous], rest[i]);
        previous = SIZE_MAX;
      }
    }
  }
  // The kernel marks the socket's first uncopied call.
  std::uint32_t first_mirrored = 0;
  for (const auto& r : recvs)
    if (!copied(r)) {
      first_mirrored = r.header.seq;
      break;
    }
  if (order == Order::mirrored_ahead) {
    const auto senders = std::stable_partition(rest.begin(), rest.end(), [](const auto& r) { return r.second == 2; });
    head.insert(head.end(), senders, rest.end());
    rest.erase(senders, rest.end());
    // A write's record is in the ring before any read of its bytes: sorted by a write's first
    // byte and a read's last byte, writes first.
    const auto ring_key = [&](const auto& r) {
      const std::uint32_t at = r.first->header.seq - first_byte;
      return r.second == 1 ? std::pair(at, 0) : std::pair(at + r.first->header.bytes - 1, 1);
    };
    std::stable_sort(head.begin(), head.end(), [&](const auto& a, const auto& b) { return ring_key(a) < ring_key(b); });
    std::swap(head, rest);
  }
  for (const auto* part : {&head, &rest}) {
    for (const auto& [record, domain] : *part) {
      if (domain == 1 || copied(*record)) {
        run.feed_one(*record, domain);
        continue;
      }
      auto d = decode_payload(*record);
      REQUIRE(d);
      d->half.domain = domain;
      run.pairing.add_mirrored_receive(d->half, record->header.seq == first_mirrored, clock, run.spans, run.info);
    }
  }
}

// Messages and bytes by (source, destination, send stamp, receive stamp): what every statistic
// after pairing sees, however the runs of one pair of calls were cut into spans.
std::map<std::tuple<DomainId, DomainId, std::int64_t, std::int64_t>, std::pair<std::uint64_t, std::uint64_t>> by_stamps(
    const std::vector<Span>& spans) {
  std::map<std::tuple<DomainId, DomainId, std::int64_t, std::int64_t>, std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& s : spans) {
    auto& [messages, bytes] = out[{s.src, s.dst, s.send_ns, s.recv_ns}];
    messages += s.messages;
    bytes += s.bytes;
  }
  return out;
}

// The records of another connection between the same two hosts: the client's port differs.
std::vector<PayloadRecord> on_client_port(std::vector<PayloadRecord> recs, std::uint16_t port) {
  for (auto& r : recs) (r.header.kind == SKEWSCOPE_HALF_SEND ? r.header.local_port : r.header.remote_port) = port;
  return recs;
}

}  // namespace

TEST_CASE("zmtp: a receiver whose calls were not copied gets the spans its parse would have given") {
  auto stream = zmtp_stream(500, 8);
  // The sender's greeting and READY in one call; the receiver's third call starts in the greeting
  // and reads messages too (copied: its messages come from its own parse).
  auto sends = records(stream, {72, 1000, 37, 2048}, SKEWSCOPE_HALF_SEND, 1'000'000);
  auto recvs = records(stream, {13, 30, 4096, 1, 500}, SKEWSCOPE_HALF_RECV, 1'000'005);
  Run copied;
  copied.feed_in_stamp_order(sends, recvs);
  REQUIRE(copied.messages() == 500);
  // The stream's numbers as they come (it wraps through 0) and half the sequence space on (it
  // wraps through 2^31: its first mirrored call is then more than half the space past 0).
  for (const std::uint32_t shift : {0u, 0x80000000u}) {
    for (auto* recs : {&sends, &recvs})
      for (auto& r : *recs) r.header.seq += shift;
    for (Order order : {Order::sender_ahead, Order::receiver_ahead, Order::by_stamp, Order::receiver_swapped,
                        Order::mirrored_ahead}) {
      CAPTURE(shift);
      CAPTURE(static_cast<int>(order));
      Run mirrored;
      feed_mirrored(mirrored, sends, recvs, order);
      CHECK(mirrored.messages() == 500);
      CHECK(by_stamps(mirrored.spans) == by_stamps(copied.spans));
      const auto c = mirrored.pairing.counters();
      CHECK(c.zmtp_mirrored_calls > 0);
      CHECK(c.zmtp_recv_messages == 500);
      CHECK(c.zmtp_mirror_unresolved_calls == 0);
      CHECK(mirrored.pairing.pending() == 0);
      mirrored.expire(1'000'000'000'000);
      CHECK(mirrored.pairing.counters().zmtp_mirror_unresolved_calls == 0);
    }
  }
}

TEST_CASE("zmtp: mirrored calls whose sender never comes are counted unresolved, no span made up") {
  auto stream = zmtp_stream(50, 8);
  const auto sends = records(stream, {100}, SKEWSCOPE_HALF_SEND, 1'000'000);
  const auto recvs = records(stream, {64, 100}, SKEWSCOPE_HALF_RECV, 2'000'000);
  Run run;
  // Only the receiver's: its greeting copied, the rest mirrored; its sender's records lost.
  const auto clock = [](DomainId, std::int64_t ns) { return ns; };
  std::uint64_t mirrored = 0;
  for (const auto& r : recvs) {
    auto d = decode_payload(r);
    REQUIRE(d);
    d->half.domain = 2;
    if (r.header.seq - sends.front().header.seq < 64) {
      run.pairing.add(*d, clock, run.spans, run.info);
    } else {
      run.pairing.add_mirrored_receive(d->half, mirrored == 0, clock, run.spans, run.info);
      ++mirrored;
    }
  }
  CHECK(run.spans.empty());
  CHECK(run.pairing.counters().zmtp_mirrored_calls == mirrored);
  run.expire(1'000'000'000'000);
  CHECK(run.spans.empty());
  CHECK(run.pairing.counters().zmtp_mirror_unresolved_calls == mirrored);
}

TEST_CASE("zmtp: a sender's lost record leaves its messages in mirrored calls without a receive half") {
  auto stream = zmtp_stream(500, 8);  // greeting and READY (72 bytes), then 10 bytes a message
  auto sends = records(stream, {72, 1000, 1000, 1000, 1000, 1000}, SKEWSCOPE_HALF_SEND, 1'000'000);
  const auto recvs = records(stream, {64, 700}, SKEWSCOPE_HALF_RECV, 2'000'000);
  sends.erase(sends.begin() + 2);  // messages 100..199 lost with their record
  Run run;
  feed_mirrored(run, sends, recvs, Order::by_stamp);
  run.expire(1'000'000'000'000);
  const auto c = run.pairing.counters();
  CHECK(c.parser_sync_losses == 1);
  // The sender regains sync at the end of a later write of whole messages; every message its
  // parse names, and only those, has a receive half from the mirrored calls.
  CHECK(c.zmtp_send_messages >= 200);
  CHECK(c.zmtp_send_messages <= 300);
  CHECK(c.zmtp_recv_messages == c.zmtp_send_messages);
  CHECK(run.messages() == c.zmtp_send_messages);
  CHECK(c.zmtp_mirror_unresolved_calls == 0);
  CHECK(run.pairing.pending() == 0);
}

TEST_CASE("zmtp: a mirrored receiver may lag its sender by far more messages than one write holds") {
  // 200 000 messages parsed at the sender before the receiver's first mirrored call is met (the
  // half rings read later than the payload ring): every one still gets its receive half.
  auto stream = zmtp_stream(200'000, 8);
  const auto sends = records(stream, {72, 8192}, SKEWSCOPE_HALF_SEND, 1'000'000);
  const auto recvs = records(stream, {64, 8, 65536}, SKEWSCOPE_HALF_RECV, 1'000'005);
  Run run;
  feed_mirrored(run, sends, recvs, Order::sender_ahead);
  const auto c = run.pairing.counters();
  CHECK(run.messages() == 200'000);
  CHECK(c.zmtp_mirror_boundaries_dropped == 0);
  CHECK(run.pairing.pending() == 0);
}

TEST_CASE("zmtp: chunks of six streams taken in turn pair as each stream alone, before and after idle streams go") {
  // Request/reply traffic feeds a connection's streams in turn, other connections' between them;
  // the pairing remembers the streams it served last (fewer than six), which must not outlive them.
  const auto stream = zmtp_stream(200, 8);
  Run in_turn;
  for (std::uint64_t round = 0; round < 2; ++round) {
    const std::uint64_t t0 = 1'000'000 + round * 1'000'000'000'000;
    std::vector<std::pair<std::vector<PayloadRecord>, DomainId>> parts;
    Run alone;
    for (std::uint16_t c = 0; c < 3; ++c) {
      const std::uint64_t t = t0 + c * 1'000'000'000ull;
      const auto port = static_cast<std::uint16_t>(40000 + c);
      parts.emplace_back(on_client_port(records(stream, {72, 300, 41}, SKEWSCOPE_HALF_SEND, t), port), 1);
      parts.emplace_back(on_client_port(records(stream, {13, 500, 77}, SKEWSCOPE_HALF_RECV, t + 5), port), 2);
      alone.feed(parts[parts.size() - 2].first, 1);
      alone.feed(parts.back().first, 2);
    }
    REQUIRE(alone.messages() == 600);
    const std::size_t before = in_turn.spans.size();
    for (std::size_t i = 0;; ++i) {
      bool fed = false;
      for (const auto& [recs, domain] : parts) {
        if (i >= recs.size()) continue;
        in_turn.feed_one(recs[i], domain);
        fed = true;
      }
      if (!fed) break;
    }
    const std::vector<Span> fresh(in_turn.spans.begin() + static_cast<std::ptrdiff_t>(before), in_turn.spans.end());
    CHECK(by_stamps(fresh) == by_stamps(alone.spans));
    CHECK(in_turn.pairing.pending() == 0);
    // 500 s later every stream has been idle past its limit: forgotten, so that the next round's
    // connections (the same ports) start again at their greetings.
    in_turn.expire(static_cast<std::int64_t>(t0) + 500'000'000'000);
  }
  CHECK(in_turn.pairing.counters().parser_sync_losses == 0);
}
