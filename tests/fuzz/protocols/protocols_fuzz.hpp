// The property both fuzz drivers (libFuzzer and the seeded replay) check on one input, a capture
// file (tests/data/protocols/README.md) read leniently: feeding its chunks never reads out of
// bounds, throws or aborts, and what comes out agrees with the counters. Each input is fed twice:
// as recorded, and with every prefix cut to a length taken from the input's size.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "capture_file.hpp"
#include "protocols/kafka/kafka_connection.hpp"
#include "protocols/zmtp/zmtp_stream.hpp"

namespace skewscope::protocols::fuzz {

using testing::Record;

// Chunks over the records as they are: a `captured` larger than `length` is passed on as is, to
// exercise the parsers' guard. Prefixes optionally cut to `cap`.
inline std::vector<testing::Chunk> chunks(const std::vector<Record>& records, std::size_t cap) {
  std::vector<testing::Chunk> out;
  std::uint32_t seq[2] = {testing::kFirstSeq, testing::kFirstSeq};
  for (const auto& r : records) {
    const std::span<const std::uint8_t> bytes(r.bytes.data(), std::min(r.bytes.size(), cap));
    out.push_back({r.direction, {r.ts_ns, seq[r.direction], r.length, bytes}});
    seq[r.direction] += r.length;
  }
  return out;
}

inline void require(bool ok) {
  if (!ok) std::abort();
}

inline void check_kafka(std::span<const std::uint8_t> input) {
  const auto records = testing::parse_capture(input);
  for (std::size_t cap : {std::size_t{1} << 30, input.size() % 509}) {
    kafka::ConnectionTracker t;
    std::vector<kafka::BatchHalf> out;
    for (const auto& c : chunks(records, cap))
      t.feed(c.direction == 0 ? kafka::Direction::kToBroker : kafka::Direction::kFromBroker, c.chunk, out);
    t.flush(out);
    const auto& n = t.counters();
    require(n.batches_produced + n.batches_fetched == out.size());
    std::uint64_t checked = 0;
    for (const auto& h : out) {
      require(h.batch_bytes >= 61);
      checked += h.crc_checked;
      (void)kafka::primary_key(h);
      (void)kafka::offset_key(h);
    }
    require(checked == n.batches_crc_checked);
  }
}

inline void check_zmtp(std::span<const std::uint8_t> input) {
  const auto records = testing::parse_capture(input);
  for (std::size_t cap : {std::size_t{1} << 30, input.size() % 509}) {
    zmtp::StreamTracker t[2];
    std::vector<zmtp::Message> out[2];
    for (const auto& c : chunks(records, cap))
      zmtp::feed_direction(t[c.direction], &t[1 - c.direction], c.chunk, out[c.direction]);
    for (int d = 0; d < 2; ++d) {
      require(t[d].counters().messages == out[d].size());
      for (const auto& m : out[d]) {
        require(m.frames >= 1);
        require(m.wire_bytes >= m.payload_bytes + 2ull * m.frames);
      }
    }
  }
}

}  // namespace skewscope::protocols::fuzz
