// ZMTP/2.0 and the 3.x -> 2.0 downgrade over bytes recorded with a real JeroMQ 0.3.6 peer
// (tests/data/protocols/zmtp-v2-*.cap, protocol_recorder zmtp2): JeroMQ <-> JeroMQ, libzmq PUSH ->
// JeroMQ PULL (the sender downgrades) and JeroMQ PUSH -> libzmq PULL (the receiver's greeting
// downgrades). Exact message and frame counts from the manifest, in both directions; the same
// result however the stream is split; and without the other direction's version, a downgraded
// stream is left unparsed with its reason rather than read at a wrong offset.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "zmtp_test_support.hpp"

namespace {

using namespace skewscope::protocols;
using namespace skewscope::protocols::testing;
using zmtp::Framing;
using zmtp::Message;
using zmtp::StreamTracker;

using Run = ZmtpRun;
Run run(const std::vector<Chunk>& chunks, bool joined = true) { return run_zmtp(chunks, joined); }
constexpr auto same = same_message;
constexpr auto frames = frame_count;

std::map<std::string, std::pair<long, long>> manifest() { return zmtp_manifest("zmtp-v2-manifest.txt"); }

std::vector<Record> capture(const std::string& name) { return zmtp_capture("zmtp-v2-" + name + "-"); }

// In every recording direction 0 is the connecting PUSH (the sender), 1 the PULL.
void check_exact(const Run& r, const std::pair<long, long>& expect) {
  const auto& push = r.tracker[0].counters();
  const auto& pull = r.tracker[1].counters();
  CHECK(r.tracker[0].state() == StreamTracker::State::kFrames);
  CHECK(r.tracker[1].state() == StreamTracker::State::kFrames);
  CHECK(r.tracker[0].framing() == Framing::kZmtp2);
  CHECK(r.tracker[1].framing() == Framing::kZmtp2);
  CHECK(r.messages[0].size() == static_cast<std::size_t>(expect.first));
  CHECK(push.messages == static_cast<std::uint64_t>(expect.first));
  CHECK(frames(r.messages[0]) == static_cast<std::uint64_t>(expect.second));
  CHECK(push.greetings == 1);
  CHECK(push.commands == 1);  // the identity frame
  CHECK(r.messages[1].empty());
  CHECK(pull.greetings == 1);
  CHECK(pull.commands == 1);
  for (const auto* c : {&push, &pull}) {
    CHECK(c->invalid == 0);
    CHECK(c->sync_losses == 0);
    CHECK(c->unparsed_connections == 0);
  }
  // Messages tile the stream after the identity frame: each starts where the previous ended.
  for (std::size_t i = 1; i < r.messages[0].size(); ++i)
    CHECK(r.messages[0][i].seq ==
          static_cast<std::uint32_t>(r.messages[0][i - 1].seq + r.messages[0][i - 1].wire_bytes));
  // The greeting (12 bytes) and the empty identity frame (2) come before the first message.
  REQUIRE(!r.messages[0].empty());
  CHECK(r.messages[0].front().seq == kFirstSeq + 14);
  // The 9000-byte message (a long frame) spans reads.
  bool long_frame = false;
  for (const auto& m : r.messages[0]) long_frame |= m.payload_bytes == 9000 && m.first_ts_ns < m.last_ts_ns;
  CHECK(long_frame);
}

}  // namespace

TEST_CASE("zmtp 2.0: JeroMQ PUSH -> JeroMQ PULL gives every message and frame") {
  const Run r = run(to_chunks(capture("jeromq")));
  check_exact(r, manifest().at("jeromq"));
  for (int d = 0; d < 2; ++d) {
    CHECK(r.tracker[d].version_major() == 1);
    CHECK(r.tracker[d].counters().downgrades == 0);
  }
}

TEST_CASE("zmtp 2.0: libzmq PUSH announces 3.x and downgrades for a JeroMQ PULL") {
  const Run r = run(to_chunks(capture("downgrade-push")));
  check_exact(r, manifest().at("downgrade-push"));
  CHECK(r.tracker[0].version_major() == 3);  // what it announced
  CHECK(r.tracker[0].counters().downgrades == 1);
  CHECK(r.tracker[1].counters().downgrades == 0);
}

TEST_CASE("zmtp 2.0: JeroMQ PUSH to a libzmq PULL, whose greeting downgrades") {
  const Run r = run(to_chunks(capture("downgrade-pull")));
  check_exact(r, manifest().at("downgrade-pull"));
  CHECK(r.tracker[1].version_major() == 3);
  CHECK(r.tracker[1].counters().downgrades == 1);
  CHECK(r.tracker[0].counters().downgrades == 0);
}

TEST_CASE("zmtp 2.0: a downgraded stream without its peer's version is never read at a wrong offset") {
  // The defect this guards: read as a 64-byte 3.x greeting, the downgraded stream gave more
  // messages than were sent. Without the other direction, its 13th byte (the identity frame's
  // flags, 00) is no mechanism name: the stream is left unparsed, with its reason.
  for (const char* pattern : {"downgrade-push", "downgrade-pull"}) {
    CAPTURE(pattern);
    const Run r = run(to_chunks(capture(pattern)), false);
    const int downgraded = std::string(pattern) == "downgrade-push" ? 0 : 1;
    const StreamTracker& t = r.tracker[downgraded];
    CHECK(r.messages[downgraded].empty());
    CHECK(t.state() == StreamTracker::State::kUnparsed);
    REQUIRE(t.unparsed_reason().has_value());
    CHECK(zmtp::to_string(*t.unparsed_reason()) == "version_unknown");
    CHECK(t.counters().unparsed_bytes == t.counters().bytes);
    // The JeroMQ end announced 2.0 itself: parsed without help.
    CHECK(r.tracker[1 - downgraded].framing() == Framing::kZmtp2);
    CHECK(r.tracker[1 - downgraded].state() == StreamTracker::State::kFrames);
  }
  // A JeroMQ PUSH needs no peer: its own greeting says 2.0.
  const Run alone = run(to_chunks(capture("jeromq")), false);
  CHECK(alone.messages[0].size() == static_cast<std::size_t>(manifest().at("jeromq").first));
}

TEST_CASE("zmtp 2.0: a 3.x stream whose peer announced 3.x keeps 3.x framing") {
  std::vector<std::uint8_t> greeting(64, 0);
  greeting[0] = 0xFF;
  greeting[8] = 1;
  greeting[9] = 0x7F;
  greeting[10] = 3;
  greeting[11] = 1;
  // Mechanism left all zero: only the peer's version can say 3.x here.
  SUBCASE("peer 3.x") {
    StreamTracker t;
    std::vector<Message> out;
    t.learn_peer_revision(3);
    t.feed({1, 0, 64, greeting}, out);
    CHECK(t.framing() == Framing::kZmtp3);
    CHECK(t.state() == StreamTracker::State::kFrames);
    CHECK(t.version_minor() == 1);
  }
  SUBCASE("peer 2.0: the 12th byte is a socket type, 2.0 frames follow") {
    StreamTracker t;
    std::vector<Message> out;
    t.learn_peer_revision(1);
    // greeting (12), identity 00 00, message of two frames: 01 01 'a', 00 02 'b' 'c'
    std::vector<std::uint8_t> bytes(greeting.begin(), greeting.begin() + 12);
    bytes[11] = 8;  // PUSH
    const std::uint8_t tail[] = {0x00, 0x00, 0x01, 0x01, 'a', 0x00, 0x02, 'b', 'c'};
    bytes.insert(bytes.end(), std::begin(tail), std::end(tail));
    t.feed({1, 0, static_cast<std::uint32_t>(bytes.size()), bytes}, out);
    CHECK(t.framing() == Framing::kZmtp2);
    CHECK(t.counters().downgrades == 1);
    REQUIRE(out.size() == 1);
    CHECK(out[0].seq == 14);
    CHECK(out[0].frames == 2);
    CHECK(out[0].payload_bytes == 3);
    CHECK(t.version_minor() == 0);
  }
  SUBCASE("peer announced 0: no framing followed here") {
    StreamTracker t;
    std::vector<Message> out;
    t.learn_peer_revision(0);
    t.feed({1, 0, 64, greeting}, out);
    CHECK(t.state() == StreamTracker::State::kUnparsed);
    CHECK(zmtp::to_string(*t.unparsed_reason()) == "unsupported_version");
  }
  SUBCASE("2.0 has no COMMAND bit: flags 04 are invalid there") {
    StreamTracker t;
    std::vector<Message> out;
    std::vector<std::uint8_t> bytes(greeting.begin(), greeting.begin() + 12);
    bytes[10] = 1;
    const std::uint8_t tail[] = {0x00, 0x00, 0x04, 0x01, 'a'};
    bytes.insert(bytes.end(), std::begin(tail), std::end(tail));
    t.feed({1, 0, static_cast<std::uint32_t>(bytes.size()), bytes}, out);
    CHECK(out.empty());
    CHECK(t.counters().invalid == 1);
    CHECK(t.state() == StreamTracker::State::kOutOfSync);
  }
}

TEST_CASE("zmtp 2.0: split at any boundary gives the same messages as whole reads") {
  for (const char* pattern : {"jeromq", "downgrade-push", "downgrade-pull"}) {
    CAPTURE(pattern);
    check_split_like_whole(capture(pattern), {1u, 2u, 3u, 11u, 13u, 64u, 1000u});
  }
}

TEST_CASE("zmtp 2.0: truncated prefixes never invent a message and count what they lose") {
  for (const char* pattern : {"jeromq", "downgrade-push", "downgrade-pull"}) {
    const auto records = capture(pattern);
    const Run whole = run(to_chunks(records));
    for (std::uint32_t cap : {0u, 1u, 2u, 5u, 10u, 11u, 12u, 13u, 14u, 16u, 40u, 100u, 255u, 300u, 1000u, 4095u}) {
      CAPTURE(pattern);
      CAPTURE(cap);
      const Run cut = run(to_chunks(records, 0, cap));
      for (int d = 0; d < 2; ++d) {
        const auto& c = cut.tracker[d].counters();
        std::size_t j = 0;
        for (const auto& m : cut.messages[d]) {
          while (j < whole.messages[d].size() && whole.messages[d][j].seq != m.seq) ++j;
          REQUIRE(j < whole.messages[d].size());
          CHECK(same(m, whole.messages[d][j]));
        }
        if (cut.messages[d].size() < whole.messages[d].size()) CHECK(c.sync_losses + c.unparsed_connections > 0);
      }
    }
  }
}
