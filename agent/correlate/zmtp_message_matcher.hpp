// The meeting point of ZeroMQ messages: a message's send half (from the sender's ZMTP stream) and
// its receive half (from the receiver's), matched by (directed flow, TCP sequence number of the
// message's first byte), which both ends compute. One table serves the agent's local pairing
// (MessagePairing) and each partition an agent owns in the exchange (exchange::RemotePairing),
// where ZMTP halves cross hosts keyed like TCP halves: the matching rule lives here only.
// Both sides wait in bounded tables, aged by the caller's clock; every drop is counted.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "correlate/zmtp_waiting_side.hpp"
#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

struct ZmtpMatchCounters {
  std::uint64_t sends = 0, recvs = 0;  // halves offered
  std::uint64_t pairs = 0;
  std::uint64_t duplicates = 0;  // a second half with the same key (replaces the first)
  std::uint64_t table_full = 0;
  std::uint64_t unpaired_sends = 0;  // never received (aged out, or passed by a later receive)
  std::uint64_t unpaired_recvs = 0;  // the sender's half never came (aged out, or passed)
};

inline void add_zmtp_counters(ZmtpMatchCounters& to, const ZmtpMatchCounters& c) {
  to.sends += c.sends;
  to.recvs += c.recvs;
  to.pairs += c.pairs;
  to.duplicates += c.duplicates;
  to.table_full += c.table_full;
  to.unpaired_sends += c.unpaired_sends;
  to.unpaired_recvs += c.unpaired_recvs;
}

// Each direction of a connection (a flow) keeps the halves that wait in sequence order, one queue
// per side. Each side's halves of a flow come in stream order (one socket's calls, in the order
// its thread made them; the exchange keeps each agent's order), so a message pairs with the
// other side's oldest waiting half, and a waiting half that a later message of the other side
// passes can no longer pair (its other half was lost, e.g. to a full payload ring) and is counted
// unpaired at once instead of waiting its whole max age: at most one side of a flow waits at a
// time. Per message that is one lookup in a table of flows and a queue operation, where a table
// keyed by message cost a cache miss or more per half once tens of thousands of halves were in
// flight (a socket buffer's worth at millions of messages a second).
class ZmtpMessageMatcher {
 public:
  ZmtpMessageMatcher() = default;
  // Movable (a table's nodes move with it, so the recent flows' cached queues stay valid, and the
  // moved-from matcher forgets them); not copyable (a copy would cache another table's node).
  ZmtpMessageMatcher(ZmtpMessageMatcher&& o) noexcept { *this = std::move(o); }
  ZmtpMessageMatcher& operator=(ZmtpMessageMatcher&& o) noexcept {
    flows_ = std::move(o.flows_);
    recent_ = std::exchange(o.recent_, {});
    pending_ = std::exchange(o.pending_, 0);
    largest_ = std::exchange(o.largest_, nullptr);
    largest_scanned_ = std::exchange(o.largest_scanned_, false);
    counters_ = o.counters_;
    return *this;
  }
  ZmtpMessageMatcher(const ZmtpMessageMatcher&) = delete;
  ZmtpMessageMatcher& operator=(const ZmtpMessageMatcher&) = delete;

  // `flow`: sender -> receiver; `seq`: the message's first byte. Pairs with the other half if it
  // waits (the span is appended to `out`), else waits when `room`. Without room, a flow that waits
  // with fewer halves than the flow with the most takes the place of that flow's oldest half (one
  // stream whose other side lost sync, or went silent, cannot keep every other stream's halves
  // out); else the half is refused. Either loss counts table_full. Returns whether a span was
  // appended.
  bool add(HalfKind kind, const FlowKey& flow, std::uint32_t seq, const ZmtpMessageEnd& end, bool room,
           std::vector<Span>& out);
  // `count` consecutive messages of one flow and side, each `end.bytes` long, the first at `seq`,
  // sharing `end` (a run of a chunk's messages): exactly as many add() calls, one per message,
  // each with room while fewer than `room` halves wait here (the caller's bound, less what else it
  // holds). A run that meets a run of
  // the other side of the same size pairs in one step, as one span of that many messages
  // (Span::messages). Returns the spans appended.
  std::size_t add_run(HalfKind kind, const FlowKey& flow, std::uint32_t seq, std::uint32_t count,
                      const ZmtpMessageEnd& end, std::size_t room, std::vector<Span>& out);
  // Halves that waited since before cutoff_ns (the caller's aging clock) are counted unpaired.
  // Each queue ages from its front and stops at the first young half; an older half behind a
  // younger one (ages slightly out of order) waits at most as long as that disorder.
  void expire(std::int64_t cutoff_ns);
  std::size_t pending() const { return pending_; }
  std::size_t flows() const { return flows_.size(); }
  const ZmtpMatchCounters& counters() const { return counters_; }

 private:
  struct FlowQueues {
    ZmtpWaitingSide sends, recvs;
  };
  // Stores a half that found nothing to pair with, in sequence order.
  void wait(ZmtpWaitingSide& mine, std::uint32_t seq, const ZmtpMessageEnd& end);

  FlowQueues& queues_of(const FlowKey& flow);
  // Without room: drops the oldest half of the flow that waits with the most, when that is more
  // than `mine` waits with one more; returns whether it did.
  bool crowd_out_largest(const FlowQueues& mine);

  std::unordered_map<FlowKey, FlowQueues, FlowKeyHash> flows_;
  // The last two flows' queues, most recent first: a chunk's messages share its flow, and hashing
  // the flow per message was an eighth of the agent's time under ZMTP load. Two, because a
  // request/reply connection's chunks alternate between its two directions (one flow remembered
  // missed on every chunk there). Reset when expire() erases flows.
  struct RecentFlow {
    FlowKey flow;
    FlowQueues* queues = nullptr;
  };
  std::array<RecentFlow, 2> recent_{};
  std::size_t pending_ = 0;
  // The flow that waited with the most halves at the last scan, which a full table crowds out.
  // A full table keeps its flows' sizes but for this one's losses, so one scan serves until it
  // is no longer larger; then one more scan, and none again until expire() (which also erases
  // flows) resets both: at a full table of equal flows no half pays a scan.
  FlowQueues* largest_ = nullptr;
  bool largest_scanned_ = false;
  ZmtpMatchCounters counters_;
};

}  // namespace skewscope
