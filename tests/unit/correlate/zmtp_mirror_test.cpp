#include "correlate/zmtp_mirror.hpp"

#include <doctest/doctest.h>

#include <initializer_list>
#include <utility>
#include <vector>

using namespace skewscope;

namespace {

ZmtpBoundaries of(std::initializer_list<ZmtpBoundary> messages) {
  ZmtpBoundaries b;
  for (const auto& m : messages) b.push(m.seq, m.bytes);
  return b;
}

using Taken = std::vector<std::pair<std::uint32_t, std::int64_t>>;  // (message's first byte, call's stamp)

struct Receiver {
  ZmtpMirroredCalls calls;
  Taken taken;                                 // each message, from the runs emitted
  std::vector<std::uint32_t> runs;             // the messages of each emit
  std::optional<std::uint32_t> copied_to = 0;  // set by each test to where its mirroring begins
  std::size_t resolve(ZmtpBoundaries& boundaries, std::optional<std::uint32_t> parsed_to, std::int64_t now_ns = 0) {
    return calls.resolve(boundaries, parsed_to, copied_to, now_ns,
                         [&](const ZmtpBoundary& m, std::uint32_t count, const ZmtpMirroredCall& c) {
                           runs.push_back(count);
                           for (std::uint32_t i = 0; i < count; ++i)
                             taken.emplace_back(m.seq + i * m.bytes, c.capture_ns);
                         });
  }
};

}  // namespace

TEST_CASE("zmtp mirror: a message is stamped by the call that read its last byte") {
  // Messages [100, 110), [110, 130), [130, 131); calls [100, 115) at 1, [115, 131) at 2.
  Receiver r;
  r.copied_to = 100;
  CHECK(r.calls.add({100, 15, 1}, true));
  CHECK(r.calls.add({115, 16, 2}, false));
  ZmtpBoundaries boundaries = of({{100, 10}, {110, 20}, {130, 1}});
  CHECK(r.resolve(boundaries, 131u) == 0);
  CHECK(r.taken == Taken{{100, 1}, {110, 2}, {130, 2}});
  CHECK(r.calls.empty());
  CHECK(boundaries.empty());
}

TEST_CASE("zmtp mirror: calls wait for the sender's parse, and go once it has passed them") {
  Receiver r;
  r.copied_to = 100;
  r.calls.add({100, 10, 1}, true);
  r.calls.add({110, 10, 2}, false);
  ZmtpBoundaries boundaries;
  r.resolve(boundaries, std::nullopt);  // no sender yet: both wait
  CHECK(r.calls.size() == 2);
  r.resolve(boundaries, 105u);  // the sender has not parsed the first call's end
  CHECK(r.calls.size() == 2);
  boundaries.push(100, 15);     // a message ending in the second call
  r.resolve(boundaries, 115u);  // the first call read no message's end
  CHECK(r.taken == Taken{{100, 2}});
  CHECK(r.calls.size() == 1);  // its bytes after 115 are not parsed yet
  r.resolve(boundaries, 120u);
  CHECK(r.calls.empty());
}

TEST_CASE("zmtp mirror: messages that ended before mirroring began (read by copied calls) are passed over") {
  Receiver r;
  r.copied_to = 200;
  r.calls.add({200, 10, 7}, true);
  ZmtpBoundaries boundaries = of({{150, 20}, {170, 30}, {200, 10}});
  CHECK(r.resolve(boundaries, 210u) == 0);
  CHECK(r.taken == Taken{{200, 7}});
}

TEST_CASE("zmtp mirror: calls that arrive out of order (per-CPU rings) are taken in stream order") {
  Receiver r;
  r.copied_to = 100;
  ZmtpBoundaries boundaries = of({{100, 10}, {110, 10}, {120, 10}, {130, 10}});
  r.calls.add({110, 10, 2}, false);  // before the first: where mirroring began is not known yet
  r.resolve(boundaries, 140u, 2);
  CHECK(r.taken.empty());
  r.calls.add({130, 10, 4}, false);
  r.calls.add({100, 10, 1}, true);
  r.resolve(boundaries, 140u, 4);
  CHECK(r.taken == Taken{{100, 1}, {110, 2}});  // 120..130 not arrived: a gap, waiting
  CHECK(r.calls.size() == 1);
  r.calls.add({120, 10, 3}, false);
  r.resolve(boundaries, 140u, 5);
  CHECK(r.taken == Taken{{100, 1}, {110, 2}, {120, 3}, {130, 4}});
  CHECK(r.calls.empty());
  CHECK_FALSE(r.calls.add({120, 10, 3}, false));  // a duplicate of one taken
}

TEST_CASE("zmtp mirror: a gap that never fills is given up after the hold, its messages counted") {
  Receiver r;
  r.copied_to = 100;
  ZmtpBoundaries boundaries = of({{100, 10}, {110, 10}, {120, 10}});
  r.calls.add({100, 10, 1'000}, true);
  r.calls.add({120, 10, 3'000}, false);  // [110, 120) lost with its half
  CHECK(r.resolve(boundaries, 130u, 3'000) == 0);
  CHECK(r.taken == Taken{{100, 1'000}});
  CHECK(r.resolve(boundaries, 130u, 3'000 + ZmtpMirroredCalls::kGapHoldNs - 1) == 0);
  CHECK(r.calls.size() == 1);
  CHECK(r.resolve(boundaries, 130u, 3'000 + ZmtpMirroredCalls::kGapHoldNs) == 1);
  CHECK(r.taken == Taken{{100, 1'000}, {120, 3'000}});
  CHECK(r.calls.empty());
  CHECK_FALSE(r.calls.add({110, 10, 2'000}, false));  // too late: its messages were given up
}

TEST_CASE("zmtp mirror: sequence numbers that wrap") {
  Receiver r;
  r.copied_to = 0xfffffff0u;
  r.calls.add({0xfffffff0u, 0x20, 3}, true);
  ZmtpBoundaries boundaries = of({{0xfffffff0u, 0x10}, {0u, 0x10}});
  r.resolve(boundaries, 0x10u);
  CHECK(r.taken == Taken{{0xfffffff0u, 3}, {0u, 3}});
}

TEST_CASE("zmtp mirror: calls whose sender never comes age out") {
  Receiver r;
  r.copied_to = 100;
  r.calls.add({100, 10, 5}, true);
  r.calls.add({110, 10, 6}, false);
  CHECK(r.calls.expire(6) == 1);
  CHECK(r.calls.expire(100) == 1);
  CHECK(r.calls.empty());
}

TEST_CASE("zmtp mirror: the first call waits until the receiver's copied calls are parsed") {
  Receiver r;
  r.copied_to = 80;  // the copied call [80, 100) not parsed yet (the payload ring is behind)
  r.calls.add({100, 10, 1}, true);
  ZmtpBoundaries boundaries = of({{90, 15}, {105, 5}});
  r.resolve(boundaries, 110u, 1);
  CHECK(r.taken.empty());  // the message [90, 105) ends here, but the one before it was copied
  r.copied_to = 100;
  r.resolve(boundaries, 110u, 2);
  CHECK(r.taken == Taken{{90, 1}, {105, 1}});
}

TEST_CASE("zmtp mirror: a copied parse that has not begun is behind, wherever the stream's numbers are") {
  // The half rings read before the payload ring: the receiver's stream exists only through its
  // mirrored calls. A parse position of 0 would have compared as ahead of a first call half the
  // sequence space or more past it.
  for (const std::uint32_t start : {100u, 0x80000100u, 0xfffff100u}) {
    CAPTURE(start);
    Receiver r;
    r.copied_to = std::nullopt;
    r.calls.add({start, 10, 1}, true);
    ZmtpBoundaries boundaries = of({{start - 10, 15}, {start + 5, 5}});
    r.resolve(boundaries, start + 10, 2);
    CHECK(r.taken.empty());
    r.copied_to = start;
    r.resolve(boundaries, start + 10, 3);
    CHECK(r.taken == Taken{{start - 10, 1}, {start + 5, 1}});
  }
}

TEST_CASE("zmtp mirror: a copied parse behind by more than a gap's hold is still waited for") {
  // On a loaded host the payload ring (copied calls) is read well after the half rings: the
  // mirrored call must not go on before the copied messages, or they pair out of order.
  Receiver r;
  r.copied_to = 80;
  r.calls.add({100, 10, 1'000}, true);
  ZmtpBoundaries boundaries = of({{90, 15}, {105, 5}});
  CHECK(r.resolve(boundaries, 110u, 1'000 + 5 * ZmtpMirroredCalls::kGapHoldNs) == 0);
  CHECK(r.taken.empty());
  CHECK(r.calls.size() == 1);
  r.copied_to = 100;
  CHECK(r.resolve(boundaries, 110u, 1'000 + 6 * ZmtpMirroredCalls::kGapHoldNs) == 0);
  CHECK(r.taken == Taken{{90, 1'000}, {105, 1'000}});
}

TEST_CASE("zmtp mirror: copied records that never come (lost with the payload ring) are given up after their hold") {
  Receiver r;
  r.copied_to = 80;
  r.calls.add({100, 10, 1'000}, true);
  ZmtpBoundaries boundaries = of({{90, 15}, {105, 5}});
  r.resolve(boundaries, 110u, 1'000 + ZmtpMirroredCalls::kCopiedHoldNs - 1);
  CHECK(r.taken.empty());
  r.resolve(boundaries, 110u, 1'000 + ZmtpMirroredCalls::kCopiedHoldNs);
  // [90, 105) ended in this call, its start was read by a copied call: it is stamped by this call.
  CHECK(r.taken == Taken{{90, 1'000}, {105, 1'000}});
  CHECK(r.calls.empty());
}

TEST_CASE("zmtp mirror: consecutive messages of one size are one run") {
  ZmtpBoundaries b = of({{100, 10}, {110, 10}, {120, 10}, {130, 5}, {135, 10}, {150, 10}});
  CHECK(b.runs() == 4);  // 100..130 by 10; 130 by 5; 135; 150 (not where 135's run ends)
  std::vector<std::uint32_t> seqs;
  while (!b.empty()) {
    seqs.push_back(b.front().seq);
    b.pop_front();
  }
  CHECK(seqs == std::vector<std::uint32_t>{100, 110, 120, 130, 135, 150});
  b = of({{100, 10}, {110, 10}, {120, 7}});
  CHECK(b.drop_front_run() == 2);
  CHECK(b.front().seq == 120);
}

TEST_CASE("zmtp mirror: a run of equal messages is taken per call that read their last bytes, in one step each") {
  // Twelve messages of 10 B from 100; calls [100, 145) at 1 (four ends: 110 ... 140), [145, 220) at 2.
  Receiver r;
  r.copied_to = 100;
  CHECK(r.calls.add({100, 45, 1}, true));
  CHECK(r.calls.add({145, 75, 2}, false));
  ZmtpBoundaries boundaries;
  for (std::uint32_t i = 0; i < 12; ++i) boundaries.push(100 + 10 * i, 10);
  REQUIRE(boundaries.runs() == 1);
  CHECK(r.resolve(boundaries, 220u) == 0);
  CHECK(r.runs == std::vector<std::uint32_t>{4, 8});
  Taken want;
  for (std::uint32_t i = 0; i < 12; ++i) want.emplace_back(100 + 10 * i, i < 4 ? 1 : 2);
  CHECK(r.taken == want);
  CHECK(boundaries.empty());
}
