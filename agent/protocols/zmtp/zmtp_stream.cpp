#include "protocols/zmtp/zmtp_stream.hpp"

#include <algorithm>

namespace skewscope::protocols::zmtp {
namespace {

constexpr std::uint32_t kGreetingSize3 = 64;
constexpr std::uint32_t kGreetingSize2 = 12;  // signature, revision, socket type
constexpr std::uint32_t kVersionAt = 10;      // the version (2.0: revision) byte
constexpr std::uint32_t kMechanismAt = 12;    // 3.x: first byte of the mechanism name
constexpr std::uint8_t kFlagMore = 0x01;
constexpr std::uint8_t kFlagLong = 0x02;
constexpr std::uint8_t kFlagCommand = 0x04;
constexpr std::uint8_t kFlagsReserved3 = 0xF8;
constexpr std::uint8_t kFlagsReserved2 = 0xFC;  // 2.0 has no COMMAND bit
// While resynchronising, a long size beyond this is taken as noise rather than a frame: libzmq's
// default maximum message size is unlimited, but a real stream regains sync on its small frames.
constexpr std::uint64_t kResyncMaxFrame = 1ull << 31;

std::uint32_t header_size(std::uint8_t flags) { return (flags & kFlagLong) ? 9 : 2; }

std::uint64_t frame_size(const std::uint8_t* header) {
  if ((header[0] & kFlagLong) == 0) return header[1];
  std::uint64_t v = 0;
  for (int i = 1; i < 9; ++i) v = (v << 8) | header[i];
  return v;
}

// RFC 23: a mechanism name is uppercase letters, digits, '-', '_', '.', '+', null-padded; the
// mechanisms in use (NULL, PLAIN, CURVE) are not empty, so their first byte is never 00.
bool starts_mechanism(std::uint8_t b) {
  return (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-' || b == '_' || b == '.' || b == '+';
}

}  // namespace

std::string_view to_string(UnparsedReason r) {
  switch (r) {
    case UnparsedReason::kNotAGreeting: return "not_a_greeting";
    case UnparsedReason::kGreetingNotCaptured: return "greeting_not_captured";
    case UnparsedReason::kUnsupportedVersion: return "unsupported_version";
    case UnparsedReason::kVersionUnknown: return "version_unknown";
  }
  return "unknown";
}

bool looks_like_greeting(std::span<const std::uint8_t> b) {
  if (b.empty() || b[0] != 0xFF) return false;
  if (b.size() > 9 && b[9] != 0x7F) return false;
  return b.size() <= kVersionAt || b[kVersionAt] >= 1;
}

std::optional<std::uint8_t> StreamTracker::announced_revision() const {
  if (greeting_have_ <= kVersionAt) return std::nullopt;
  return greeting_[kVersionAt];
}

void StreamTracker::learn_peer_revision(std::uint8_t revision) {
  if (!peer_revision_) peer_revision_ = revision;
}

std::uint8_t StreamTracker::reserved_flags() const {
  return framing_ == Framing::kZmtp2 ? kFlagsReserved2 : kFlagsReserved3;
}

bool StreamTracker::is_command(std::uint8_t flags) const {
  return framing_ == Framing::kZmtp3 && (flags & kFlagCommand) != 0;
}

void MessageStarts::record(std::uint32_t seq, bool keep_oldest) {
  if (starts_.size() == kCapacity) {
    if (keep_oldest) return;
    starts_.pop_front();
  }
  starts_.push_back(seq);
}

void MessageStarts::forget_before(std::uint32_t seq) {
  while (!starts_.empty() && seq_before(starts_.front(), seq)) starts_.pop_front();
}

std::optional<std::uint32_t> MessageStarts::first_in(std::uint32_t seq, std::uint32_t length) const {
  for (const std::uint32_t start : starts_) {
    const std::uint32_t offset = start - seq;  // modulo 2^32: a start before seq is a huge offset
    if (offset < length) return start;
  }
  return std::nullopt;
}

void StreamTracker::feed(const CapturedChunk& chunk, std::vector<Message>& out, const MessageStarts* proven) {
  if (chunk.length == 0) return;
  ++counters_.chunks;
  counters_.bytes += chunk.length;
  CapturedChunk c = chunk;
  if (c.prefix.size() > c.length) {  // more captured than moved: the capture is wrong, trust length
    ++counters_.invalid;
    c.prefix = c.prefix.first(c.length);
  }

  if (state_ == State::kNew) {
    next_seq_ = c.seq;
    state_ = State::kGreeting;
  }
  const std::int32_t gap = seq_diff(c.seq, next_seq_);
  next_seq_ = c.seq + c.length;
  if (state_ == State::kUnparsed) {
    counters_.unparsed_bytes += c.length;
    return;
  }
  if (gap != 0) {
    if (state_ == State::kGreeting) {  // a greeting with a hole cannot be checked
      give_up(UnparsedReason::kGreetingNotCaptured);
      return;
    }
    if (state_ == State::kFrames) lose_sync();
  }
  if (state_ == State::kOutOfSync) {
    // A message start proven by the other end's parse: frames follow from there, and the
    // messages that begin in this chunk are reported.
    if (const auto start = proven ? proven->first_in(c.seq, c.length) : std::nullopt) {
      const std::uint32_t pos = *start - c.seq;
      counters_.bytes_out_of_sync += pos;
      ++counters_.resyncs;
      ++counters_.resyncs_at_proven_start;
      state_ = State::kFrames;
      feed_frames(c, pos, out);
      return;
    }
    counters_.bytes_out_of_sync += c.length;
    if (try_resync(c)) {
      ++counters_.resyncs;
      state_ = State::kFrames;
    } else {
      ++counters_.resync_failures;
    }
    return;
  }
  std::uint32_t pos = 0;
  if (state_ == State::kGreeting) {
    feed_greeting(c, pos);
    if (state_ != State::kFrames) return;
  }
  feed_frames(c, pos, out);
}

// Called while a chunk is fed (its length already counted): every byte of the stream so far,
// greeting bytes included, is one that no message came from.
void StreamTracker::give_up(UnparsedReason reason) {
  state_ = State::kUnparsed;
  unparsed_reason_ = reason;
  ++counters_.unparsed_connections;
  counters_.unparsed_bytes = counters_.bytes;
}

void StreamTracker::feed_greeting(const CapturedChunk& c, std::uint32_t& pos) {
  while (greeting_have_ < greeting_size_ && pos < c.length) {
    const std::uint32_t i = greeting_have_;
    if (i == kVersionAt + 1 && framing_ == Framing::kUndecided && !decide_framing()) {
      give_up(UnparsedReason::kUnsupportedVersion);
      return;
    }
    const bool captured = pos < c.prefix.size();
    greeting_[i] = captured ? c.prefix[pos] : 0;
    ++greeting_have_;
    ++pos;
    if (!check_greeting_byte(i, captured)) {
      give_up(*unparsed_reason_);
      return;
    }
  }
  if (greeting_have_ == greeting_size_) {
    ++counters_.greetings;
    identity_pending_ = framing_ == Framing::kZmtp2;
    state_ = State::kFrames;
  }
}

// At the greeting's 12th byte of a stream that announced 3.x: what the connection settled on.
// False when the peer announced a version no framing here follows (0: ZMTP 1.0 framing).
bool StreamTracker::decide_framing() {
  if (!peer_revision_) {  // not seen: 3.x only if the greeting proves it (check_greeting_byte)
    framing_ = Framing::kZmtp3;
    check_mechanism_ = true;
    return true;
  }
  if (*peer_revision_ == 0) return false;
  if (*peer_revision_ >= 3) {
    framing_ = Framing::kZmtp3;
    return true;
  }
  framing_ = Framing::kZmtp2;  // RFC 23 backwards interoperability: speak the 2.0 peer's framing
  greeting_size_ = kGreetingSize2;
  ++counters_.downgrades;
  return true;
}

// Checks byte `index` just stored; on false, unparsed_reason_ says why.
bool StreamTracker::check_greeting_byte(std::uint32_t index, bool captured) {
  const std::uint8_t b = greeting_[index];
  if (index <= kVersionAt && !captured) {
    // Signature and version decide what this stream is: uncaptured, nothing is known.
    unparsed_reason_ = UnparsedReason::kGreetingNotCaptured;
    return false;
  }
  if ((index == 0 && b != 0xFF) || (index == 9 && b != 0x7F)) {
    // Not a stream start we recognise: a mid-stream connection, or not ZMTP. Never guessed.
    unparsed_reason_ = UnparsedReason::kNotAGreeting;
    return false;
  }
  if (index == kVersionAt) {
    if (b == 0) {
      unparsed_reason_ = UnparsedReason::kUnsupportedVersion;
      return false;
    }
    if (b < 3) {  // ZMTP/2.0 (revision 1; RFC 23 reads 2 as 2.0 too)
      framing_ = Framing::kZmtp2;
      greeting_size_ = kGreetingSize2;
    }
  }
  if (index == kMechanismAt && check_mechanism_ && (!captured || !starts_mechanism(b))) {
    // Where a 3.x greeting names its mechanism, a stream downgraded to 2.0 has its identity
    // frame; without the peer's version, only a real mechanism name proves 3.x.
    unparsed_reason_ = UnparsedReason::kVersionUnknown;
    return false;
  }
  return true;
}

void StreamTracker::feed_frames(const CapturedChunk& c, std::uint32_t pos, std::vector<Message>& out) {
  const std::uint32_t captured = static_cast<std::uint32_t>(c.prefix.size());
  while (pos < c.length) {
    if (in_frame_body_) {
      const std::uint64_t step = std::min<std::uint64_t>(body_left_, c.length - pos);
      const std::uint64_t end = pos + step;
      if (end > captured) counters_.bytes_skipped += end - std::max<std::uint64_t>(pos, captured);
      pos = static_cast<std::uint32_t>(end);
      body_left_ -= step;
      if (body_left_ == 0) {
        in_frame_body_ = false;
        frame_complete(c.ts_ns, out);
      }
      continue;
    }
    if (pos >= captured) {  // the next frame header was not captured: where frames start is lost
      counters_.bytes_out_of_sync += c.length - pos;
      lose_sync();
      return;
    }
    if (header_have_ == 0) {
      const std::uint8_t flags = c.prefix[pos];
      if ((flags & reserved_flags()) != 0) {
        ++counters_.invalid;
        counters_.bytes_out_of_sync += c.length - pos;
        lose_sync();
        return;
      }
      frame_seq_ = c.seq + pos;
      frame_ts_ = c.ts_ns;
      // A header wholly in the captured bytes (nearly all of them) is taken at once.
      const std::uint32_t hsize = header_size(flags);
      if (captured - pos >= hsize) {
        std::copy_n(c.prefix.data() + pos, hsize, header_);
        header_have_ = hsize;
        pos += hsize;
        header_complete(c, out);
        continue;
      }
    }
    header_[header_have_++] = c.prefix[pos++];
    if (header_have_ == header_size(header_[0])) header_complete(c, out);
  }
}

void StreamTracker::header_complete(const CapturedChunk& c, std::vector<Message>& out) {
  const std::uint8_t flags = header_[0];
  const std::uint32_t hsize = header_have_;
  body_left_ = frame_size(header_);
  header_have_ = 0;
  frame_is_command_ = is_command(flags);
  frame_has_more_ = (flags & kFlagMore) != 0;
  if (identity_pending_) {  // ZMTP/2.0: the greeting ends with one identity frame (final)
    identity_pending_ = false;
    frame_is_command_ = true;
    if (frame_has_more_) {
      ++counters_.invalid;
      lose_sync();
      return;
    }
  }
  if (body_left_ >> 63) {  // ZMTP: the most significant bit of a long size is zero
    ++counters_.invalid;
    lose_sync();
    return;
  }
  if (!frame_is_command_) {
    if (!in_message_) {
      in_message_ = true;
      msg_ = Message{};
      msg_.seq = frame_seq_;
      msg_.first_ts_ns = frame_ts_;
    }
    ++msg_.frames;
    msg_.wire_bytes += hsize + body_left_;
    msg_.payload_bytes += body_left_;
  }
  if (body_left_ == 0) {
    frame_complete(c.ts_ns, out);
  } else {
    in_frame_body_ = true;
  }
}

void StreamTracker::frame_complete(std::uint64_t ts_ns, std::vector<Message>& out) {
  if (frame_is_command_) {
    ++counters_.commands;
    return;
  }
  msg_.last_ts_ns = ts_ns;
  if (frame_has_more_) return;
  in_message_ = false;
  ++counters_.messages;
  // Field by field: msg_ was just written in 8-byte pieces, and a copy of the whole read it back
  // in 16-byte ones, a store-forwarding stall on every message (a fifth of the parse).
  Message& m = out.emplace_back();
  m.seq = msg_.seq;
  m.wire_bytes = msg_.wire_bytes;
  m.payload_bytes = msg_.payload_bytes;
  m.frames = msg_.frames;
  m.first_ts_ns = msg_.first_ts_ns;
  m.last_ts_ns = ts_ns;
}

void StreamTracker::lose_sync() {
  ++counters_.sync_losses;
  // A message is lost if it was in progress, or if the header it began with was cut.
  if (in_message_ || (header_have_ > 0 && !is_command(header_[0]) && !identity_pending_)) ++counters_.messages_lost;
  in_message_ = false;
  in_frame_body_ = false;
  identity_pending_ = false;
  header_have_ = 0;
  body_left_ = 0;
  state_ = State::kOutOfSync;
}

bool StreamTracker::try_resync(const CapturedChunk& c) const {
  if (c.prefix.size() != c.length) return false;
  const std::uint8_t* p = c.prefix.data();
  const std::uint64_t n = c.length;
  std::uint64_t pos = 0;
  bool ends_message = false;
  bool any_body = false;  // a run of zero bytes also tiles as empty frames: not evidence
  while (pos < n) {
    const std::uint8_t flags = p[pos];
    if ((flags & reserved_flags()) != 0) return false;
    const std::uint32_t hsize = header_size(flags);
    if (n - pos < hsize) return false;
    const std::uint64_t size = frame_size(p + pos);
    if (size >= kResyncMaxFrame || n - pos - hsize < size) return false;
    const bool command = is_command(flags);
    if (command && (flags & kFlagMore) != 0) return false;  // commands are never multipart
    pos += hsize + size;
    any_body |= size > 0;
    ends_message = command || (flags & kFlagMore) == 0;
  }
  return ends_message && any_body;
}

void feed_direction(StreamTracker& tracker, const StreamTracker* other, const CapturedChunk& chunk,
                    std::vector<Message>& out, const MessageStarts* proven) {
  if (other) {
    if (const auto r = other->announced_revision()) tracker.learn_peer_revision(*r);
  }
  tracker.feed(chunk, out, proven);
}

}  // namespace skewscope::protocols::zmtp
