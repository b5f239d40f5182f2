// What the ZMTP stream tests share: both directions of one recorded socket run through the
// trackers as the agent runs them, message comparison, frame counts, and the manifests that give
// each recording's exact counts.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "capture_file.hpp"
#include "protocols/zmtp/zmtp_stream.hpp"

namespace skewscope::protocols::testing {

inline const std::string kZmtpData = SKEWSCOPE_PROTOCOL_DATA;

struct ZmtpRun {
  zmtp::StreamTracker tracker[2];
  std::vector<zmtp::Message> messages[2];
};

// joined: each direction learns the other's version, as the agent does for one socket; without
// it a direction parses alone (what a capture that missed the other greeting gives).
inline ZmtpRun run_zmtp(const std::vector<Chunk>& chunks, bool joined = true) {
  ZmtpRun r;
  for (const auto& c : chunks)
    zmtp::feed_direction(r.tracker[c.direction], joined ? &r.tracker[1 - c.direction] : nullptr, c.chunk,
                         r.messages[c.direction]);
  return r;
}

inline bool same_message(const zmtp::Message& a, const zmtp::Message& b) {
  return a.seq == b.seq && a.wire_bytes == b.wire_bytes && a.payload_bytes == b.payload_bytes && a.frames == b.frames &&
         a.first_ts_ns == b.first_ts_ns && a.last_ts_ns == b.last_ts_ns;
}

inline std::uint64_t frame_count(const std::vector<zmtp::Message>& ms) {
  std::uint64_t n = 0;
  for (const auto& m : ms) n += m.frames;
  return n;
}

// A manifest's lines: `pattern messages frames` (frames `-` when not counted: -1).
inline std::map<std::string, std::pair<long, long>> zmtp_manifest(const std::string& file) {
  std::map<std::string, std::pair<long, long>> m;
  std::ifstream in(kZmtpData + "/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name, frames;
    long messages = 0;
    s >> name >> messages >> frames;
    m[name] = {messages, frames == "-" ? -1 : std::stol(frames)};
  }
  return m;
}

// The one recording whose file name starts with prefix.
inline std::vector<Record> zmtp_capture(const std::string& prefix) {
  const auto files = captures(kZmtpData, prefix);
  REQUIRE(files.size() == 1);
  return load_capture(files[0]);
}

// The same messages and commands, in both directions, however the recording's reads are cut into
// pieces of each given size as when read whole.
inline void check_split_like_whole(const std::vector<Record>& records, std::initializer_list<std::uint32_t> pieces) {
  const ZmtpRun whole = run_zmtp(to_chunks(records));
  for (std::uint32_t piece : pieces) {
    CAPTURE(piece);
    const ZmtpRun split = run_zmtp(to_chunks(records, piece));
    for (int d = 0; d < 2; ++d) {
      REQUIRE(split.messages[d].size() == whole.messages[d].size());
      for (std::size_t i = 0; i < whole.messages[d].size(); ++i)
        CHECK(same_message(split.messages[d][i], whole.messages[d][i]));
      CHECK(split.tracker[d].counters().commands == whole.tracker[d].counters().commands);
    }
  }
}

}  // namespace skewscope::protocols::testing
