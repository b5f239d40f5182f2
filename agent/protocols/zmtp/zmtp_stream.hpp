// ZMTP 3.x framing of ONE direction of a TCP connection (RFC 23/ZMTP, 37/ZMTP): finds where each
// application message starts and ends in the byte stream, so that every message gets its own span
// even when one write carries many messages or one message is read in many reads.
//
// The sender's tracker and the receiver's tracker of one connection direction report the same
// message at the same sequence number: (connection, seq) pairs a message's two halves.
//
// Fed the chunks of one direction in stream order (sends of one socket, or receives of one socket).
// Pure: no I/O, no clock; memory is bounded (a few dozen bytes of a partial header, whatever the
// stream).
//
// Stream layout it follows: greeting (64 bytes: signature FF 00*8 7F, version 3.x, mechanism,
// as-server, filler), then frames. A frame is flags (bit0 MORE, bit1 LONG, bit2 COMMAND, bits 3..7
// zero), a size (1 byte, or 8 bytes big-endian when LONG), and the body. Commands (READY, PING,
// SUBSCRIBE, CURVE's MESSAGE, ...) are counted, never reported as messages. A message is one or
// more frames, the last with MORE clear.
//
// Uncaptured bytes (beyond a chunk's prefix): a frame whose header was captured is skipped by its
// size, so an uncaptured body costs nothing. A frame HEADER that falls in uncaptured bytes (or a
// gap or overlap in the sequence numbers) loses sync: the message in progress is dropped and
// counted, nothing is reported until sync is regained. The rule to regain it: a later chunk that
// was captured whole (prefix == length) and whose bytes parse, from its first byte, as complete
// frames (reserved flag bits zero, long sizes < 2^31, exactly ending at the chunk's end) whose
// last frame ends a message (MORE clear, or a command), not all of them empty (zero bytes tile as
// empty frames). Such a chunk marks a message boundary at its end; it is not reported itself (its
// first frame may continue an earlier message), and reporting resumes with the next byte. A chunk
// that does not qualify counts a resync failure. Writes that carry whole messages (request/reply,
// light load) qualify at once; a saturated stream, whose writes and reads end mid-message, may
// never qualify and stays out of sync (counted) rather than guess: capture prefixes long enough
// for the frame headers of a write (the ZMTP default batch is 8 KiB) avoid losing sync at all.
//
// A connection first seen mid-stream (its first chunk does not begin with the greeting
// signature) is never guessed at: all its bytes are counted as unparsed. A greeting with a major
// version below 3 (ZMTP 1.0/2.0) is counted as unsupported and the stream left unparsed too.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocols/captured_chunk.hpp"

namespace skewscope::protocols::zmtp {

// One complete application message.
struct Message {
  std::uint32_t seq = 0;            // TCP sequence number of its first byte (first frame's flags)
  std::uint64_t wire_bytes = 0;     // its size on the wire: frame headers and bodies
  std::uint64_t payload_bytes = 0;  // sum of its frame bodies
  std::uint32_t frames = 0;
  std::uint64_t first_ts_ns = 0;  // ts of the chunk holding its first byte: the sender's stamp
  std::uint64_t last_ts_ns = 0;   // ts of the chunk holding its last byte: the receiver's stamp
};

struct Counters {
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;                 // sum of chunk lengths
  std::uint64_t greetings = 0;             // complete 3.x greetings
  std::uint64_t messages = 0;              // reported application messages
  std::uint64_t commands = 0;              // command frames (handshake, heartbeats, ...)
  std::uint64_t bytes_skipped = 0;         // uncaptured bytes stepped over by a known size
  std::uint64_t sync_losses = 0;           // header in uncaptured bytes, or a sequence gap/overlap
  std::uint64_t messages_lost = 0;         // messages in progress when sync was lost
  std::uint64_t resyncs = 0;               // chunks that regained sync
  std::uint64_t resync_failures = 0;       // chunks seen out of sync that did not qualify
  std::uint64_t bytes_out_of_sync = 0;     // bytes seen while out of sync
  std::uint64_t invalid = 0;               // malformed input: bad signature bytes, reserved flags
  std::uint64_t unparsed_connections = 0;  // first seen mid-stream, or ZMTP < 3.0 (0 or 1 per stream)
  std::uint64_t unparsed_bytes = 0;        // bytes of such a stream
};

// Whether the first bytes a connection sent can be a ZMTP greeting (signature FF ... 7F, version
// 3 or later, as far as captured): for choosing which connections get a tracker. Either side
// sends its greeting first, so the first send of both ends qualifies.
bool looks_like_greeting(std::span<const std::uint8_t> first_bytes);

class StreamTracker {
 public:
  enum class State : std::uint8_t {
    kNew,        // nothing fed yet
    kGreeting,   // inside the 64-byte greeting
    kFrames,     // in sync, following frames
    kOutOfSync,  // lost sync; waiting for a chunk that regains it
    kUnparsed,   // mid-stream start, unsupported version or invalid greeting: ignored for good
  };

  // Feeds the next chunk of this direction; messages that end in it are appended to `out`, in
  // stream order. Chunks with length 0 are ignored.
  void feed(const CapturedChunk& chunk, std::vector<Message>& out);

  State state() const { return state_; }
  const Counters& counters() const { return counters_; }
  // Greeting facts once known (valid from state kFrames on).
  std::uint8_t version_major() const { return greeting_[10]; }
  std::uint8_t version_minor() const { return greeting_[11]; }

 private:
  void feed_greeting(const CapturedChunk& chunk, std::uint32_t& pos);
  void feed_frames(const CapturedChunk& chunk, std::uint32_t pos, std::vector<Message>& out);
  void header_complete(const CapturedChunk& chunk, std::vector<Message>& out);
  void frame_complete(std::uint64_t ts_ns, std::vector<Message>& out);
  void lose_sync();
  void give_up(std::uint64_t unparsed_bytes);
  bool try_resync(const CapturedChunk& chunk);

  State state_ = State::kNew;
  Counters counters_;
  std::uint32_t next_seq_ = 0;  // sequence number of the next byte expected
  std::uint8_t greeting_[64] = {};
  std::uint32_t greeting_have_ = 0;
  // Frame header being assembled (it may straddle chunks): flags + up to 8 size bytes.
  std::uint8_t header_[9] = {};
  std::uint32_t header_have_ = 0;
  std::uint64_t body_left_ = 0;  // bytes of the current frame's body still to come
  std::uint32_t frame_seq_ = 0;  // where the current frame's header began, and that chunk's ts
  std::uint64_t frame_ts_ = 0;
  bool in_frame_body_ = false;
  bool frame_is_command_ = false;
  bool frame_has_more_ = false;
  // Message in progress.
  bool in_message_ = false;
  Message msg_;
};

}  // namespace skewscope::protocols::zmtp
