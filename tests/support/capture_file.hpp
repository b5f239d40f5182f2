// Reading the .cap files of tests/data/protocols (format in its README) and turning their records
// into CapturedChunks: sequence numbers per direction, prefixes cut or chunks re-split on demand.
// Shared by the unit tests and the fuzz drivers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "protocols/captured_chunk.hpp"

namespace skewscope::protocols::testing {

struct Record {
  std::uint8_t direction = 0;
  std::uint32_t length = 0;
  std::uint64_t ts_ns = 0;
  std::vector<std::uint8_t> bytes;  // what was captured (normally length bytes)
};

// Lenient: stops at the first record that does not fit (fuzz inputs end anywhere).
inline std::vector<Record> parse_capture(std::span<const std::uint8_t> in) {
  std::vector<Record> out;
  std::size_t pos = 0;
  auto le = [&](std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | in[at + static_cast<std::size_t>(i)];
    return v;
  };
  while (in.size() - pos >= 17) {
    Record r;
    r.direction = in[pos] & 1;
    r.length = static_cast<std::uint32_t>(le(pos + 1, 4));
    const auto captured = static_cast<std::uint32_t>(le(pos + 5, 4));
    r.ts_ns = le(pos + 9, 8);
    pos += 17;
    if (captured > in.size() - pos) break;
    r.bytes.assign(in.begin() + static_cast<std::ptrdiff_t>(pos),
                   in.begin() + static_cast<std::ptrdiff_t>(pos + captured));
    pos += captured;
    out.push_back(std::move(r));
  }
  return out;
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<Record> load_capture(const std::filesystem::path& p) { return parse_capture(read_bytes(p)); }

// The capture files of the data folder whose names start with `prefix`.
inline std::vector<std::filesystem::path> captures(const std::string& dir, const std::string& prefix) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (e.path().extension() == ".cap" && name.rfind(prefix, 0) == 0) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Sequence numbers start just below 2^32 so that every stream wraps.
inline constexpr std::uint32_t kFirstSeq = 0xFFFFF000u;

struct Chunk {
  std::uint8_t direction;
  CapturedChunk chunk;
};

// The records as chunks: each record cut into pieces of at most `piece` bytes (0 = whole), each
// piece keeping the record's timestamp, and each piece's prefix cut to `cap` bytes.
// The spans point into `records`.
inline std::vector<Chunk> to_chunks(const std::vector<Record>& records, std::uint32_t piece = 0,
                                    std::uint32_t cap = 0xFFFFFFFFu) {
  std::vector<Chunk> out;
  std::uint32_t seq[2] = {kFirstSeq, kFirstSeq};
  for (const auto& r : records) {
    const std::uint32_t step = piece == 0 ? (r.length ? r.length : 1) : piece;
    for (std::uint32_t off = 0; off < r.length; off += step) {
      const std::uint32_t len = std::min(step, r.length - off);
      const std::size_t have = off < r.bytes.size() ? std::min<std::size_t>(r.bytes.size() - off, len) : 0;
      const std::span<const std::uint8_t> bytes(r.bytes.data() + std::min<std::size_t>(off, r.bytes.size()), have);
      out.push_back({r.direction, {r.ts_ns, seq[r.direction], len, bytes.first(std::min<std::size_t>(have, cap))}});
      seq[r.direction] += len;
    }
  }
  return out;
}

}  // namespace skewscope::protocols::testing
