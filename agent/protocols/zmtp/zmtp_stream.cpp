#include "protocols/zmtp/zmtp_stream.hpp"

#include <algorithm>

namespace skewscope::protocols::zmtp {
namespace {

constexpr std::uint32_t kGreetingSize = 64;
constexpr std::uint8_t kFlagMore = 0x01;
constexpr std::uint8_t kFlagLong = 0x02;
constexpr std::uint8_t kFlagCommand = 0x04;
constexpr std::uint8_t kFlagsReserved = 0xF8;
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

}  // namespace

bool looks_like_greeting(std::span<const std::uint8_t> b) {
  if (b.empty() || b[0] != 0xFF) return false;
  if (b.size() > 9 && b[9] != 0x7F) return false;
  return b.size() <= 10 || b[10] >= 3;
}

void StreamTracker::feed(const CapturedChunk& chunk, std::vector<Message>& out) {
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
      give_up(c.length);
      return;
    }
    if (state_ == State::kFrames) lose_sync();
  }
  if (state_ == State::kOutOfSync) {
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

void StreamTracker::give_up(std::uint64_t unparsed_bytes) {
  state_ = State::kUnparsed;
  ++counters_.unparsed_connections;
  counters_.unparsed_bytes += unparsed_bytes;
}

void StreamTracker::feed_greeting(const CapturedChunk& c, std::uint32_t& pos) {
  while (greeting_have_ < kGreetingSize && pos < c.length) {
    const std::uint32_t i = greeting_have_;
    if (pos >= c.prefix.size()) {
      // Signature and version decide whether this is ZMTP 3 at all: uncaptured, nothing is known.
      // The mechanism and filler after them may stay unknown.
      if (i < 12) {
        give_up(c.length);
        return;
      }
      greeting_[i] = 0;
    } else {
      greeting_[i] = c.prefix[pos];
    }
    ++greeting_have_;
    ++pos;
    const bool bad_signature = (i == 0 && greeting_[0] != 0xFF) || (i == 9 && greeting_[9] != 0x7F);
    if (bad_signature) {
      // Not a stream start we recognise: a mid-stream connection, or not ZMTP. Never guessed.
      give_up(c.length);
      return;
    }
    if (i == 10 && greeting_[10] < 3) {  // ZMTP 1.0/2.0 peer: other framing, not parsed
      give_up(c.length);
      return;
    }
  }
  if (greeting_have_ == kGreetingSize) {
    ++counters_.greetings;
    state_ = State::kFrames;
  }
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
      if ((flags & kFlagsReserved) != 0) {
        ++counters_.invalid;
        counters_.bytes_out_of_sync += c.length - pos;
        lose_sync();
        return;
      }
      frame_seq_ = c.seq + pos;
      frame_ts_ = c.ts_ns;
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
  frame_is_command_ = (flags & kFlagCommand) != 0;
  frame_has_more_ = (flags & kFlagMore) != 0;
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
  out.push_back(msg_);
}

void StreamTracker::lose_sync() {
  ++counters_.sync_losses;
  // A message is lost if it was in progress, or if the header it began with was cut.
  if (in_message_ || (header_have_ > 0 && (header_[0] & kFlagCommand) == 0)) ++counters_.messages_lost;
  in_message_ = false;
  in_frame_body_ = false;
  header_have_ = 0;
  body_left_ = 0;
  state_ = State::kOutOfSync;
}

bool StreamTracker::try_resync(const CapturedChunk& c) {
  if (c.prefix.size() != c.length) return false;
  const std::uint8_t* p = c.prefix.data();
  const std::uint64_t n = c.length;
  std::uint64_t pos = 0;
  bool ends_message = false;
  bool any_body = false;  // a run of zero bytes also tiles as empty frames: not evidence
  while (pos < n) {
    const std::uint8_t flags = p[pos];
    if ((flags & kFlagsReserved) != 0) return false;
    const std::uint32_t hsize = header_size(flags);
    if (n - pos < hsize) return false;
    const std::uint64_t size = frame_size(p + pos);
    if (size >= kResyncMaxFrame || n - pos - hsize < size) return false;
    const bool command = (flags & kFlagCommand) != 0;
    if (command && (flags & kFlagMore) != 0) return false;  // commands are never multipart
    pos += hsize + size;
    any_body |= size > 0;
    ends_message = command || (flags & kFlagMore) == 0;
  }
  return ends_message && any_body;
}

}  // namespace skewscope::protocols::zmtp
