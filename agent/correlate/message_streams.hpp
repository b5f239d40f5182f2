// The streams MessagePairing follows (correlate/message_pairing.cpp): one direction of one
// connection as one domain saw it, its key, and a ZMTP stream's parse and pairing state. Apart from
// the pairing so that its file holds what it does with them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "correlate/zmtp_mirror.hpp"
#include "protocols/zmtp/zmtp_stream.hpp"
#include "skewscope/half.hpp"

namespace skewscope {

// One direction of one connection, as seen by one domain.
struct MessageStreamKey {
  DomainId domain = 0;
  HalfKind kind = HalfKind::send;
  FlowKey flow;
  bool operator==(const MessageStreamKey&) const = default;
};

struct MessageStreamKeyHash {
  std::size_t operator()(const MessageStreamKey& k) const noexcept {
    const auto mix = [](std::size_t h, std::size_t v) { return (h ^ v) * 1099511628211ull; };
    return mix(mix(FlowKeyHash{}(k.flow), k.domain), static_cast<std::size_t>(k.kind));
  }
};

// A sending stream with a local receiver checks its boundaries against that receiver every
// kZmtpBoundaryCheck runs of them.
inline constexpr std::size_t kZmtpBoundaryCheck = 256;

struct ZmtpPairingStream {
  protocols::zmtp::StreamTracker tracker;
  std::int64_t last_seen_ns = 0;
  std::uint64_t sync_losses = 0, invalid = 0;  // already added to the totals
  std::uint64_t resyncs_at_proven_start = 0;   // already added to the totals
  bool framing_counted = false, unparsed_counted = false;
  // Either end of a direction that this agent follows at both ends, out of sync, resumes at a
  // message start the other end's parse proved (zmtp::MessageStarts). Every stream keeps one
  // start per call it parsed, the latest (a burst of lost records often leaves both ends out of
  // sync, and the sender's starts from before its own loss are what its receiver needs); while
  // the other end waits for one (`starts_wanted`), every start, and the oldest, which the other
  // end reaches however far behind it is: it forgets those it has read past.
  protocols::zmtp::MessageStarts starts;
  bool starts_wanted = false;
  // A sending stream out of sync holds its chunks (in order, at most kMaxHeldChunks, at most
  // kMaxHoldNs) until its receiver, which reads the same bytes later, has parsed them: a held
  // chunk that holds one of the receiver's message starts resumes there.
  struct HeldChunk {
    Half half;
    std::vector<std::uint8_t> prefix;
  };
  std::deque<HeldChunk> held;
  // One copy for both ends (correlate/zmtp_mirror.hpp). A sending stream whose receiver is
  // followed here too keeps where its messages end, until that receiver's mirrored calls take
  // them or its own parse (while copied) passes them; a receiving stream whose calls come
  // uncopied keeps them until the sender's parse has passed them.
  std::size_t next_boundary_check = kZmtpBoundaryCheck;
  ZmtpBoundaries boundaries;
  bool mirrored = false;  // receiver: its calls come uncopied
  ZmtpMirroredCalls calls;
  // The other end of the direction, found once per change of the table (its epoch): the
  // mirrored path meets it at every chunk.
  ZmtpPairingStream* other = nullptr;
  DomainId other_domain = 0;
  std::uint64_t other_epoch = 0;
};

// The streams the last chunks went to, most recent first, each valid for the table's epoch it was
// found in (the table moves its epoch on whenever a stream is added or erased): comparing keys is
// cheaper than hashing one, which was a sixteenth of the agent's time on request/reply traffic
// with payload capture. Four, because a request/reply connection whose two ends are both followed
// here feeds four streams in turn (each direction's sender, copied, and receiver, mirrored).
class RecentZmtpStreams {
 public:
  ZmtpPairingStream* find(const MessageStreamKey& key, std::uint64_t epoch) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].epoch != epoch || !(entries_[i].key == key)) continue;
      const Entry hit = entries_[i];
      for (std::size_t j = i; j > 0; --j) entries_[j] = entries_[j - 1];
      entries_[0] = hit;
      return hit.stream;
    }
    return nullptr;
  }
  void remember(const MessageStreamKey& key, ZmtpPairingStream* stream, std::uint64_t epoch) {
    for (std::size_t j = entries_.size() - 1; j > 0; --j) entries_[j] = entries_[j - 1];
    entries_[0] = {key, stream, epoch};
  }

 private:
  struct Entry {
    MessageStreamKey key;
    ZmtpPairingStream* stream = nullptr;
    std::uint64_t epoch = 0;  // a table's epoch starts at 1: an empty entry never matches
  };
  std::array<Entry, 4> entries_{};
};

}  // namespace skewscope
