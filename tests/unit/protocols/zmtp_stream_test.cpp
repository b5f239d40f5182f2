// ZMTP stream tracker over real libzmq bytes (tests/data/protocols): exact message counts, the same
// result however the stream is split, truncated prefixes that lose sync visibly and regain it,
// mid-stream starts and invalid input.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "zmtp_test_support.hpp"

namespace {

using namespace skewscope::protocols;
using namespace skewscope::protocols::testing;
using zmtp::Message;
using zmtp::StreamTracker;

using Run = ZmtpRun;
Run run(const std::vector<Chunk>& chunks, bool joined = true) { return run_zmtp(chunks, joined); }
constexpr auto same = same_message;
constexpr auto frames = frame_count;

std::map<std::string, std::pair<long, long>> manifest() { return zmtp_manifest("zmtp-manifest.txt"); }

std::vector<Record> capture(const std::string& name) { return zmtp_capture(name); }

}  // namespace

TEST_CASE("zmtp: PUSH/PULL capture gives every message, frame and command") {
  const auto expect = manifest().at("pushpull");
  const auto records = capture("zmtp-pushpull");
  const Run r = run(to_chunks(records));
  const auto& c = r.tracker[0].counters();
  CHECK(r.tracker[0].state() == StreamTracker::State::kFrames);
  CHECK(r.tracker[0].version_major() == 3);
  CHECK(c.greetings == 1);
  CHECK(c.messages == static_cast<std::uint64_t>(expect.first));
  CHECK(r.messages[0].size() == static_cast<std::size_t>(expect.first));
  CHECK(frames(r.messages[0]) == static_cast<std::uint64_t>(expect.second));
  CHECK(c.commands >= 1);  // READY
  CHECK(c.invalid == 0);
  CHECK(c.sync_losses == 0);
  CHECK(c.bytes_skipped == 0);
  // PULL sends nothing but its greeting and READY.
  CHECK(r.tracker[1].counters().messages == 0);
  CHECK(r.tracker[1].counters().commands == 1);
  // Many messages per read: the recording coalesced them, the tracker separates them.
  CHECK(r.messages[0].size() > records.size());
  // Messages tile the stream after the handshake: each starts where the previous ended.
  for (std::size_t i = 1; i < r.messages[0].size(); ++i)
    CHECK(r.messages[0][i].seq ==
          static_cast<std::uint32_t>(r.messages[0][i - 1].seq + r.messages[0][i - 1].wire_bytes));
  // The 9000-byte message spans reads: its first and last bytes came in different chunks.
  bool spans = false;
  for (const auto& m : r.messages[0]) spans |= m.payload_bytes == 9000 && m.first_ts_ns < m.last_ts_ns;
  CHECK(spans);
}

TEST_CASE("zmtp: REQ/REP capture gives every request and reply") {
  const auto expect = manifest().at("reqrep");
  const Run r = run(to_chunks(capture("zmtp-reqrep")));
  CHECK(r.messages[0].size() == static_cast<std::size_t>(expect.first));
  CHECK(r.messages[1].size() == static_cast<std::size_t>(expect.first));
  for (const auto& m : r.messages[0]) CHECK(m.frames == 2);  // empty delimiter + request
  CHECK(r.tracker[0].counters().invalid + r.tracker[1].counters().invalid == 0);
}

TEST_CASE("zmtp: split at every byte boundary gives the same messages as whole reads") {
  for (const char* name : {"zmtp-pushpull", "zmtp-reqrep"}) {
    CAPTURE(name);
    check_split_like_whole(capture(name), {1u, 2u, 3u, 7u, 64u, 1000u});
  }
}

TEST_CASE("zmtp: truncated prefixes never invent a message and count what they lose") {
  for (const char* name : {"zmtp-pushpull", "zmtp-reqrep"}) {
    const auto records = capture(name);
    const Run whole = run(to_chunks(records));
    std::vector<std::uint32_t> caps;
    for (std::uint32_t cap = 0; cap <= 200; ++cap) caps.push_back(cap);
    for (std::uint32_t cap : {256u, 300u, 512u, 1000u, 2048u, 4095u}) caps.push_back(cap);
    for (std::uint32_t cap : caps) {
      CAPTURE(name);
      CAPTURE(cap);
      const Run cut = run(to_chunks(records, 0, cap));
      for (int d = 0; d < 2; ++d) {
        const auto& c = cut.tracker[d].counters();
        // Every reported message is one of the real ones, in order.
        std::size_t j = 0;
        for (const auto& m : cut.messages[d]) {
          while (j < whole.messages[d].size() && whole.messages[d][j].seq != m.seq) ++j;
          REQUIRE(j < whole.messages[d].size());
          CHECK(same(m, whole.messages[d][j]));
        }
        if (cut.messages[d].size() < whole.messages[d].size()) CHECK(c.sync_losses + c.unparsed_connections > 0);
        if (cap == 0) CHECK(c.unparsed_connections == 1);  // the greeting's signature is not known
      }
    }
  }
}

// Index of a chunk of direction 0 from a quarter into the stream on, longer than min_length.
std::size_t chunk_after_quarter(const std::vector<Chunk>& chunks, std::uint32_t min_length) {
  std::size_t i = chunks.size() / 4;
  while (i < chunks.size() && !(chunks[i].direction == 0 && chunks[i].chunk.length > min_length)) ++i;
  REQUIRE(i < chunks.size());
  return i;
}

void check_real_messages(const std::vector<Message>& cut, const std::vector<Message>& whole) {
  std::size_t j = 0;
  for (const auto& m : cut) {
    while (j < whole.size() && whole[j].seq != m.seq) ++j;
    REQUIRE(j < whole.size());
    CHECK(same(m, whole[j]));
  }
}

TEST_CASE("zmtp: sync lost on a truncated request is regained on the next whole one") {
  const auto records = capture("zmtp-reqrep");
  const Run whole = run(to_chunks(records));
  auto chunks = to_chunks(records);
  const std::size_t victim = chunk_after_quarter(chunks, 2);
  chunks[victim].chunk.prefix = chunks[victim].chunk.prefix.first(1);  // flags of the first frame only
  const Run cut = run(chunks);
  const auto& c = cut.tracker[0].counters();
  CHECK(c.sync_losses == 1);
  CHECK(c.messages_lost == 1);
  CHECK(c.resyncs == 1);
  CHECK(cut.tracker[0].state() == StreamTracker::State::kFrames);
  // The cut request and the one that proved the boundary are not reported; all others are.
  CHECK(cut.messages[0].size() == whole.messages[0].size() - 2);
  check_real_messages(cut.messages[0], whole.messages[0]);
  CHECK(same(cut.messages[0].back(), whole.messages[0].back()));
}

TEST_CASE("zmtp: a saturated stream that lost sync stays out of sync rather than guess") {
  const auto records = capture("zmtp-pushpull");
  const Run whole = run(to_chunks(records));
  auto chunks = to_chunks(records);
  const std::size_t victim = chunk_after_quarter(chunks, 200);
  chunks[victim].chunk.prefix = chunks[victim].chunk.prefix.first(5);
  const Run cut = run(chunks);
  const auto& c = cut.tracker[0].counters();
  CHECK(c.sync_losses == 1);
  CHECK(c.bytes_out_of_sync > 0);
  CHECK(cut.messages[0].size() < whole.messages[0].size());
  check_real_messages(cut.messages[0], whole.messages[0]);
  CHECK(c.resync_failures > 0);
}

TEST_CASE("zmtp: a sequence gap (a lost chunk) loses sync and is counted") {
  const auto records = capture("zmtp-pushpull");
  auto chunks = to_chunks(records);
  std::size_t victim = chunks.size() / 4;
  while (chunks[victim].direction != 0) ++victim;
  chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(victim));
  const Run r = run(chunks);
  CHECK(r.tracker[0].counters().sync_losses == 1);
  CHECK(r.tracker[0].counters().bytes_out_of_sync > 0);
}

// Direction 0 fed with its sender's message starts (here: the starts the whole stream's parse
// found, which a local sender's tracker proves on the same bytes).
Run run_with_sender_starts(const std::vector<Chunk>& chunks, const std::vector<Message>& sender) {
  zmtp::MessageStarts starts;
  Run r;
  for (const auto& c : chunks) {
    // The sender has parsed at least as far as the receiver reads: its starts up to this chunk's end.
    for (const auto& m : sender)
      if (m.seq - c.chunk.seq < c.chunk.length && starts.first_in(m.seq, 1) != m.seq) starts.record(m.seq);
    zmtp::feed_direction(r.tracker[c.direction], &r.tracker[1 - c.direction], c.chunk, r.messages[c.direction],
                         c.direction == 0 ? &starts : nullptr);
  }
  return r;
}

TEST_CASE("zmtp: a saturated stream out of sync resumes at a message start its sender proved") {
  const auto records = capture("zmtp-pushpull");
  const Run whole = run(to_chunks(records));
  auto chunks = to_chunks(records);
  const std::size_t victim = chunk_after_quarter(chunks, 200);
  chunks[victim].chunk.prefix = chunks[victim].chunk.prefix.first(5);
  const Run cut = run_with_sender_starts(chunks, whole.messages[0]);
  const auto& c = cut.tracker[0].counters();
  CHECK(c.sync_losses == 1);
  CHECK(c.resyncs == 1);
  CHECK(c.resyncs_at_proven_start == 1);
  CHECK(c.resync_failures == 0);
  CHECK(cut.tracker[0].state() == StreamTracker::State::kFrames);
  // Every message reported is a real one, the last included, and only those of the cut chunk
  // (begun in its uncaptured bytes or ending in the next chunk before the first start) are missing.
  check_real_messages(cut.messages[0], whole.messages[0]);
  CHECK(same(cut.messages[0].back(), whole.messages[0].back()));
  const auto& v = chunks[victim].chunk;
  std::size_t begun_in_victim = 0;
  for (const auto& m : whole.messages[0]) begun_in_victim += m.seq - v.seq < v.length;
  CHECK(cut.messages[0].size() < whole.messages[0].size());
  CHECK(cut.messages[0].size() + begun_in_victim + 1 >= whole.messages[0].size());
  // Without the sender's starts the same stream never resumes (the test above).
  const Run alone = run(chunks);
  CHECK(alone.tracker[0].counters().resyncs == 0);
  CHECK(alone.messages[0].size() < cut.messages[0].size());
}

TEST_CASE("zmtp: a lost chunk is passed at the next message start the sender proved") {
  const auto records = capture("zmtp-pushpull");
  const Run whole = run(to_chunks(records));
  auto chunks = to_chunks(records);
  std::size_t victim = chunks.size() / 4;
  while (chunks[victim].direction != 0) ++victim;
  const auto lost = chunks[victim].chunk;
  chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(victim));
  const Run r = run_with_sender_starts(chunks, whole.messages[0]);
  CHECK(r.tracker[0].counters().sync_losses == 1);
  CHECK(r.tracker[0].counters().resyncs_at_proven_start == 1);
  check_real_messages(r.messages[0], whole.messages[0]);
  CHECK(same(r.messages[0].back(), whole.messages[0].back()));
  // No message that had a byte in the lost chunk is reported.
  for (const auto& m : r.messages[0]) {
    const bool before = static_cast<std::int32_t>(m.seq + static_cast<std::uint32_t>(m.wire_bytes) - lost.seq) <= 0;
    const bool after = static_cast<std::int32_t>(m.seq - (lost.seq + lost.length)) >= 0;
    CHECK((before || after));
  }
}

TEST_CASE("zmtp: message starts keep the latest (or the oldest), and are found across a wrap") {
  zmtp::MessageStarts starts;
  for (std::uint32_t i = 0; i < zmtp::MessageStarts::kCapacity + 10; ++i) starts.record(0xFFFFF000u + i * 16);
  CHECK(starts.size() == zmtp::MessageStarts::kCapacity);
  CHECK_FALSE(starts.first_in(0xFFFFF000u, 16 * 10).has_value());  // the ten oldest went
  CHECK(starts.first_in(0xFFFFF000u + 16 * 10 - 3, 3) == std::nullopt);
  CHECK(starts.first_in(0xFFFFF000u + 16 * 10 - 3, 4) == 0xFFFFF000u + 16 * 10);
  // 0xFFFFF000 + 256 * 16 wraps to 0: found from a chunk that starts before the wrap.
  CHECK(starts.first_in(0xFFFFFFF8u, 100) == 0u);
  // Keeping the oldest: a full list takes no newer start.
  starts.record(0x5000u, true);
  CHECK_FALSE(starts.first_in(0x5000u, 1).has_value());
  CHECK(starts.first_in(0xFFFFF000u + 16 * 10, 1).has_value());
  // Forgetting what a reader has passed, across the wrap, makes room again.
  starts.forget_before(0x10u);
  CHECK(starts.size() == 266 - 257);  // the starts at 0x10 .. 0x90 stay
  CHECK_FALSE(starts.first_in(0xFFFFFFF0u, 0x10).has_value());
  starts.record(0x5000u, true);
  CHECK(starts.first_in(0x5000u, 1) == 0x5000u);
}

TEST_CASE("zmtp: a connection first seen mid-stream is unparsed, never guessed") {
  const auto records = capture("zmtp-pushpull");
  std::vector<Record> late(records.begin() + 6, records.end());
  const Run r = run(to_chunks(late));
  for (int d = 0; d < 2; ++d) {
    CHECK(r.messages[d].empty());
    if (r.tracker[d].counters().chunks > 0) {
      CHECK(r.tracker[d].state() == StreamTracker::State::kUnparsed);
      CHECK(r.tracker[d].counters().unparsed_connections == 1);
      CHECK(r.tracker[d].counters().unparsed_bytes == r.tracker[d].counters().bytes);
    }
  }
}

TEST_CASE("zmtp: invalid input is counted") {
  std::vector<std::uint8_t> greeting(64, 0);
  greeting[0] = 0xFF;
  greeting[9] = 0x7F;
  greeting[10] = 3;
  greeting[12] = 'N';  // mechanism NULL: a 3.x greeting even without the peer's version
  greeting[13] = 'U';
  greeting[14] = greeting[15] = 'L';
  SUBCASE("version byte 0 (ZMTP 1.0 framing): unsupported, unparsed, with the reason") {
    greeting[10] = 0;
    StreamTracker t;
    std::vector<Message> out;
    t.feed({1, 100, 64, greeting}, out);
    CHECK(t.state() == StreamTracker::State::kUnparsed);
    REQUIRE(t.unparsed_reason().has_value());
    CHECK(zmtp::to_string(*t.unparsed_reason()) == "unsupported_version");
  }
  SUBCASE("reserved flag bits") {
    StreamTracker t;
    std::vector<Message> out;
    t.feed({1, 100, 64, greeting}, out);
    const std::vector<std::uint8_t> frame = {0x00, 0x01, 'a', 0x80, 0x01, 'b'};
    t.feed({2, 164, 6, frame}, out);
    CHECK(out.size() == 1);
    CHECK(t.counters().invalid == 1);
    CHECK(t.state() == StreamTracker::State::kOutOfSync);
  }
  SUBCASE("not a greeting") {
    StreamTracker t;
    std::vector<Message> out;
    const std::vector<std::uint8_t> http = {'G', 'E', 'T', ' ', '/'};
    t.feed({1, 0, 5, http}, out);
    CHECK(t.counters().unparsed_connections == 1);
  }
  SUBCASE("a prefix longer than the chunk is clamped and counted") {
    StreamTracker t;
    std::vector<Message> out;
    t.feed({1, 0, 10, greeting}, out);
    CHECK(t.counters().invalid == 1);
    CHECK(t.state() == StreamTracker::State::kGreeting);
  }
}

TEST_CASE("zmtp: connection selection by the first bytes sent") {
  for (const char* name : {"zmtp-pushpull", "zmtp-reqrep"}) {
    const auto records = capture(name);
    // The first send of each side is its greeting's start.
    bool first[2] = {true, true};
    for (const auto& r : records) {
      if (!first[r.direction]) continue;
      first[r.direction] = false;
      CHECK(zmtp::looks_like_greeting(r.bytes));
    }
  }
  const std::vector<std::uint8_t> kafka_request = {0, 0, 0, 0x24, 0, 0x12, 0, 3, 0, 0, 0, 1};
  CHECK_FALSE(zmtp::looks_like_greeting(kafka_request));
  const std::vector<std::uint8_t> zmtp2 = {0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1};
  CHECK(zmtp::looks_like_greeting(zmtp2));  // ZMTP/2.0 (JeroMQ 0.3): parsed too
  const std::vector<std::uint8_t> revision0 = {0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0};
  CHECK_FALSE(zmtp::looks_like_greeting(revision0));
}
