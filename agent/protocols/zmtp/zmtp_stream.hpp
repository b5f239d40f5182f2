// ZMTP framing of ONE direction of a TCP connection: finds where each application message starts
// and ends in the byte stream, so that every message gets its own span even when one write carries
// many messages or one message is read in many reads. ZMTP 3.x (RFC 23/ZMTP, 37/ZMTP) and ZMTP/2.0
// (RFC 15/ZMTP: JeroMQ 0.3, libzmq 3.x) are both followed, and so is a 3.x peer that downgrades
// to 2.0 for an older peer.
//
// The sender's tracker and the receiver's tracker of one connection direction report the same
// message at the same sequence number: (connection, seq) pairs a message's two halves.
//
// Fed the chunks of one direction in stream order (sends of one socket, or receives of one socket).
// Pure: no I/O, no clock; memory is bounded (a greeting and a few bytes of a partial header,
// whatever the stream).
//
// Greeting: signature (FF, 8 bytes of padding, 7F), then the version byte ("revision" in 2.0).
//  - 3 or more: a ZMTP 3.x greeting of 64 bytes (minor version, mechanism, as-server, filler),
//    then 3.x frames: flags (bit0 MORE, bit1 LONG, bit2 COMMAND, bits 3..7 zero), a size (1
//    byte, or 8 bytes big-endian when LONG), the body. Commands (READY, PING, SUBSCRIBE, CURVE's
//    MESSAGE, ...) are counted, never reported as messages.
//  - 1 or 2: a ZMTP/2.0 greeting of 12 bytes (the 12th is the socket type), then the identity
//    frame (a handshake frame, counted with the commands), then 2.0 frames: flags (bit0 MORE,
//    bit1 LONG, bits 2..7 zero; no commands) and a size as in 3.x.
//  - 0: unsupported (counted, the stream left unparsed).
// Version negotiation (RFC 23): a 3.x peer that talks to a 2.0 peer sends the 11 bytes up to its
// version byte, reads the peer's, and then speaks 2.0: its 12th byte is a socket type, not a
// minor version, and 2.0 frames follow. A direction's own bytes alone do not say which, so the
// tracker is told the version the other direction of the same socket announced
// (learn_peer_revision): the connection speaks the lower of the two. The downgrading peer cannot
// write its 12th byte before it has read the other's version byte, so on the host that captured
// both directions of a socket the other direction's version is known by then. If it is not (that
// direction was not captured), the 3.x greeting is checked instead: its 13th byte starts the
// mechanism name (an uppercase letter or digit), where a downgraded stream has its identity
// frame's flags, 00; a stream that fails the check is counted unparsed (version_unknown), never
// read at a guessed offset.
//
// A message is one or more frames, the last with MORE clear.
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
// A second rule needs the other end: where the other end's own parse of the same direction (in
// sync) found messages to begin (MessageStarts, given by the caller when this agent follows both
// ends), a chunk that holds one of those starts resumes there and reports the messages from it on.
//
// A connection first seen mid-stream (its first chunk does not begin with the greeting
// signature) is never guessed at: all its bytes are counted as unparsed, with the reason.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string_view>
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

// Why a stream is not parsed at all (it is then counted in unparsed_connections/unparsed_bytes).
enum class UnparsedReason : std::uint8_t {
  kNotAGreeting,         // first bytes are not FF ... 7F: first seen mid-stream, or not ZMTP
  kGreetingNotCaptured,  // signature or version byte beyond the captured prefix, or a sequence gap in them
  kUnsupportedVersion,   // version byte 0 (or a 3.x stream whose peer announced 0): ZMTP 1.0 framing
  kVersionUnknown,       // 3.x greeting, the peer's version not seen, and the bytes are no 3.x greeting
};
inline constexpr std::size_t kUnparsedReasons = 4;
std::string_view to_string(UnparsedReason r);

// The framing a stream turned out to use.
enum class Framing : std::uint8_t {
  kUndecided,  // greeting not yet read far enough
  kZmtp3,      // 3.x greeting and frames
  kZmtp2,      // ZMTP/2.0: announced 1 or 2, or announced 3.x and downgraded for a 2.0 peer
};

struct Counters {
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;                    // sum of chunk lengths
  std::uint64_t greetings = 0;                // complete greetings (3.x or 2.0)
  std::uint64_t downgrades = 0;               // 3.x greetings cut to 2.0 for a 2.0 peer (0 or 1)
  std::uint64_t messages = 0;                 // reported application messages
  std::uint64_t commands = 0;                 // command frames (handshake, heartbeats, ...); 2.0: identity
  std::uint64_t bytes_skipped = 0;            // uncaptured bytes stepped over by a known size
  std::uint64_t sync_losses = 0;              // header in uncaptured bytes, or a sequence gap/overlap
  std::uint64_t messages_lost = 0;            // messages in progress when sync was lost
  std::uint64_t resyncs = 0;                  // chunks that regained sync
  std::uint64_t resyncs_at_proven_start = 0;  // of which at a message start the other end's parse proved
  std::uint64_t resync_failures = 0;          // chunks seen out of sync that did not qualify
  std::uint64_t bytes_out_of_sync = 0;        // bytes seen while out of sync
  std::uint64_t invalid = 0;                  // malformed input: reserved flag bits, a negative long size
  std::uint64_t unparsed_connections = 0;     // 0 or 1 per stream: see unparsed_reason()
  std::uint64_t unparsed_bytes = 0;           // bytes of such a stream, all of them
};

// Where messages of one direction began, as one end's parse (in sync) found them: at most
// kCapacity starts, in stream order. The other end of the same direction, out of sync, resumes at
// one of them when a chunk of its holds it: a boundary proven on the same bytes, never a guess.
class MessageStarts {
 public:
  static constexpr std::size_t kCapacity = 256;
  // When full, the oldest start goes, or with keep_oldest the new one is not kept.
  void record(std::uint32_t seq, bool keep_oldest = false);
  // The first start at or after `seq` and before seq + length (sequence numbers wrap), if any.
  std::optional<std::uint32_t> first_in(std::uint32_t seq, std::uint32_t length) const;
  void clear() { starts_.clear(); }
  // Drops the starts before `seq`: the end waiting for one has read past them.
  void forget_before(std::uint32_t seq);
  std::size_t size() const { return starts_.size(); }

 private:
  std::deque<std::uint32_t> starts_;
};

// Whether the first bytes a connection sent can be a ZMTP greeting (signature FF ... 7F, version
// 1 or later, as far as captured): for choosing which connections get a tracker. Either side
// sends its greeting first, so the first send of both ends qualifies.
bool looks_like_greeting(std::span<const std::uint8_t> first_bytes);

class StreamTracker {
 public:
  enum class State : std::uint8_t {
    kNew,        // nothing fed yet
    kGreeting,   // inside the greeting
    kFrames,     // in sync, following frames
    kOutOfSync,  // lost sync; waiting for a chunk that regains it
    kUnparsed,   // see unparsed_reason(): ignored for good
  };

  // Feeds the next chunk of this direction; messages that end in it are appended to `out`, in
  // stream order. Chunks with length 0 are ignored. Out of sync, a chunk that holds one of
  // `proven` (the message starts the other end of this direction found, when known) resumes there.
  void feed(const CapturedChunk& chunk, std::vector<Message>& out, const MessageStarts* proven = nullptr);

  // The version byte the OTHER direction of this socket announced (its announced_revision()):
  // decides whether a 3.x greeting of this direction is cut to 2.0. Call it before each feed
  // once known; a later, different value is ignored (a greeting is sent once).
  void learn_peer_revision(std::uint8_t revision);
  // Whether learn_peer_revision can still matter: once the framing is decided (or the peer's
  // version known) it cannot, and a caller may skip finding the other direction.
  bool wants_peer_revision() const { return framing_ == Framing::kUndecided && !peer_revision_; }

  State state() const { return state_; }
  // Sequence number of the byte after the last chunk fed.
  std::uint32_t next_seq() const { return next_seq_; }
  const Counters& counters() const { return counters_; }
  Framing framing() const { return framing_; }
  std::optional<UnparsedReason> unparsed_reason() const { return unparsed_reason_; }
  // This direction's version byte once its greeting got that far (whatever it is parsed as).
  std::optional<std::uint8_t> announced_revision() const;
  // Greeting facts once known (valid from state kFrames on).
  std::uint8_t version_major() const { return greeting_[10]; }
  std::uint8_t version_minor() const { return framing_ == Framing::kZmtp3 ? greeting_[11] : 0; }

 private:
  void feed_greeting(const CapturedChunk& chunk, std::uint32_t& pos);
  bool decide_framing();
  bool check_greeting_byte(std::uint32_t index, bool captured);
  void feed_frames(const CapturedChunk& chunk, std::uint32_t pos, std::vector<Message>& out);
  void header_complete(const CapturedChunk& chunk, std::vector<Message>& out);
  void frame_complete(std::uint64_t ts_ns, std::vector<Message>& out);
  void lose_sync();
  void give_up(UnparsedReason reason);
  bool try_resync(const CapturedChunk& chunk) const;
  std::uint8_t reserved_flags() const;
  bool is_command(std::uint8_t flags) const;

  State state_ = State::kNew;
  Counters counters_;
  Framing framing_ = Framing::kUndecided;
  std::optional<UnparsedReason> unparsed_reason_;
  std::optional<std::uint8_t> peer_revision_;
  bool check_mechanism_ = false;      // 3.x assumed without the peer's version: verify the greeting
  bool identity_pending_ = false;     // 2.0: the next frame is the identity, not a message
  std::uint32_t next_seq_ = 0;        // sequence number of the next byte expected
  std::uint32_t greeting_size_ = 64;  // 12 once the stream speaks 2.0
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

// Feeds one chunk to the tracker of one direction of a socket, telling it first what the other
// direction of the same socket (`other`, null when not followed) announced: the one rule by
// which the agent and the tests join a socket's two directions.
void feed_direction(StreamTracker& tracker, const StreamTracker* other, const CapturedChunk& chunk,
                    std::vector<Message>& out, const MessageStarts* proven = nullptr);

}  // namespace skewscope::protocols::zmtp
