// Building blocks of the Kafka tracker: one message (request or response) assembled from the
// captured prefixes of its chunks, and a bounds-checked reader over it that tells "not captured"
// apart from "malformed". Internal to agent/protocols/kafka.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace skewscope::protocols::kafka::wire {

std::uint32_t crc32c(std::span<const std::uint8_t> bytes);

// A Kafka message (4-byte size included, offsets from its first byte) of which only some byte
// ranges were captured, and which chunk (timestamp, sequence number) each offset came in.
class SparseMessage {
 public:
  void clear() {
    bytes_.clear();
    segments_.clear();
    marks_.clear();
    full_ = false;
  }
  // The chunk with timestamp ts carries message bytes from offset `at` on.
  // Returns false when the per-message bound on chunk marks is reached.
  bool mark(std::uint32_t at, std::uint64_t ts, std::size_t max_marks) {
    if (full_) return false;
    if (!marks_.empty() && marks_.back().ts == ts) return true;  // same timestamp: nothing to tell apart
    if (marks_.size() >= max_marks) {
      full_ = true;  // later bytes are treated as uncaptured: their timestamps would be unknown
      return false;
    }
    marks_.push_back({at, ts});
    return true;
  }
  // Captured bytes at offset `at`. Returns false when the byte bound drops them.
  bool add(std::uint32_t at, std::span<const std::uint8_t> b, std::size_t max_bytes) {
    if (b.empty()) return true;
    if (full_ || bytes_.size() + b.size() > max_bytes) {
      full_ = true;
      return false;
    }
    if (!segments_.empty() && segments_.back().offset + segments_.back().length == at) {
      segments_.back().length += static_cast<std::uint32_t>(b.size());
    } else {
      segments_.push_back({at, static_cast<std::uint32_t>(b.size()), static_cast<std::uint32_t>(bytes_.size())});
    }
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return true;
  }
  // The n bytes at offset `at` if all were captured (contiguous), else an empty span.
  std::span<const std::uint8_t> get(std::uint32_t at, std::uint32_t n) const {
    auto it = std::upper_bound(segments_.begin(), segments_.end(), at,
                               [](std::uint32_t v, const Segment& s) { return v < s.offset; });
    if (it == segments_.begin()) return {};
    --it;
    if (static_cast<std::uint64_t>(at) + n > static_cast<std::uint64_t>(it->offset) + it->length) return {};
    return {bytes_.data() + it->data_at + (at - it->offset), n};
  }
  bool captured(std::uint32_t at, std::uint32_t n) const { return n == 0 || !get(at, n).empty(); }
  // Timestamp of the chunk that carried offset `at`.
  std::uint64_t ts_at(std::uint32_t at) const {
    auto it =
        std::upper_bound(marks_.begin(), marks_.end(), at, [](std::uint32_t v, const Mark& m) { return v < m.offset; });
    return it == marks_.begin() ? 0 : std::prev(it)->ts;
  }

 private:
  struct Segment {
    std::uint32_t offset, length, data_at;
  };
  struct Mark {
    std::uint32_t offset;
    std::uint64_t ts;
  };
  std::vector<std::uint8_t> bytes_;
  std::vector<Segment> segments_;
  std::vector<Mark> marks_;
  bool full_ = false;
};

// Big-endian and varint reads over [pos, end) of a SparseMessage. The first failure sticks:
// later reads return 0 and leave pos, so a parse checks ok() at its decision points only.
class Reader {
 public:
  enum class Error : std::uint8_t { kNone, kUncaptured, kInvalid };
  Reader(const SparseMessage& m, std::uint32_t pos, std::uint32_t end) : m_(m), pos_(pos), end_(end) {}

  bool ok() const { return error_ == Error::kNone; }
  Error error() const { return error_; }
  std::uint32_t pos() const { return pos_; }
  std::uint32_t end() const { return end_; }
  std::uint32_t left() const { return end_ - pos_; }
  void fail(Error e) {
    if (error_ == Error::kNone) error_ = e;
  }

  std::int64_t be(std::uint32_t n) {
    const auto b = take(n);
    if (b.empty()) return 0;
    std::uint64_t v = 0;
    for (auto x : b) v = (v << 8) | x;
    if (n < 8 && (v >> (8 * n - 1)) != 0) v |= ~0ull << (8 * n);  // sign-extend
    return static_cast<std::int64_t>(v);
  }
  std::int16_t i16() { return static_cast<std::int16_t>(be(2)); }
  std::int32_t i32() { return static_cast<std::int32_t>(be(4)); }
  std::int64_t i64() { return be(8); }
  std::uint64_t uvarint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      const auto b = take(1);
      if (b.empty()) return 0;
      v |= static_cast<std::uint64_t>(b[0] & 0x7F) << shift;
      if ((b[0] & 0x80) == 0) return v;
    }
    fail(Error::kInvalid);
    return 0;
  }
  void skip(std::uint64_t n) {
    if (!ok()) return;
    if (n > left()) return fail(Error::kInvalid);
    pos_ += static_cast<std::uint32_t>(n);
  }
  std::span<const std::uint8_t> take(std::uint32_t n) {
    if (!ok()) return {};
    if (n > left()) {
      fail(Error::kInvalid);
      return {};
    }
    const auto b = m_.get(pos_, n);
    if (b.empty() && n > 0) {
      fail(Error::kUncaptured);
      return {};
    }
    pos_ += n;
    return b;
  }

  // Length of a Kafka array/string/bytes: classic int32/int16 (-1 = null) or compact uvarint N+1
  // (0 = null). Returns -1 for null.
  std::int64_t length(bool compact, bool int16_length = false) {
    if (compact) return static_cast<std::int64_t>(uvarint()) - 1;
    return int16_length ? i16() : i32();
  }
  // Skips a string (int16 or compact length); null is fine.
  void skip_string(bool compact) {
    const auto n = length(compact, true);
    if (ok() && n > 0) skip(static_cast<std::uint64_t>(n));
  }
  // Tagged fields of flexible versions: count, then (tag, size, bytes) each.
  void skip_tags() {
    const auto count = uvarint();
    for (std::uint64_t i = 0; ok() && i < count; ++i) {
      uvarint();
      skip(uvarint());
    }
  }

 private:
  const SparseMessage& m_;
  std::uint32_t pos_;
  std::uint32_t end_;
  Error error_ = Error::kNone;
};

}  // namespace skewscope::protocols::kafka::wire
