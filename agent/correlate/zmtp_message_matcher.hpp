// The meeting point of ZeroMQ messages: a message's send half (from the sender's ZMTP stream) and
// its receive half (from the receiver's), matched by (directed flow, TCP sequence number of the
// message's first byte), which both ends compute. One table serves the agent's local pairing
// (MessagePairing) and each partition an agent owns in the exchange (exchange::RemotePairing),
// where ZMTP halves cross hosts keyed like TCP halves: the matching rule lives here only.
// Both sides wait in bounded tables, aged by the caller's clock; every drop is counted.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

// One end of a message as the matcher keeps it.
struct ZmtpMessageEnd {
  DomainId domain = 0;
  std::int64_t age_ns = 0;   // the caller's clock for aging (capture or arrival time)
  std::int64_t time_ns = 0;  // the domain clock's wall-clock reading: the span's end
  std::uint32_t bytes = 0;   // the message's size on the wire
};

struct ZmtpMatchCounters {
  std::uint64_t sends = 0, recvs = 0;  // halves offered
  std::uint64_t pairs = 0;
  std::uint64_t duplicates = 0;  // a second half with the same key (replaces the first)
  std::uint64_t table_full = 0;
  std::uint64_t unpaired_sends = 0;  // aged out: never received (or the receiver not traced)
  std::uint64_t unpaired_recvs = 0;  // aged out: the sender's half never came
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

class ZmtpMessageMatcher {
 public:
  // `flow`: sender -> receiver; `seq`: the message's first byte. Pairs with the other half if it
  // waits (the span is appended to `out`), else waits when `room` (else counted table_full).
  // Returns whether a span was appended.
  bool add(HalfKind kind, const FlowKey& flow, std::uint32_t seq, const ZmtpMessageEnd& end, bool room,
           std::vector<Span>& out);
  // Halves that waited since before cutoff_ns (the caller's aging clock) are counted unpaired.
  void expire(std::int64_t cutoff_ns);
  std::size_t pending() const { return sends_.size() + recvs_.size(); }
  const ZmtpMatchCounters& counters() const { return counters_; }

 private:
  struct Key {
    FlowKey flow;
    std::uint32_t seq = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept { return (FlowKeyHash{}(k.flow) ^ k.seq) * 1099511628211ull; }
  };
  std::unordered_map<Key, ZmtpMessageEnd, KeyHash> sends_, recvs_;
  ZmtpMatchCounters counters_;
};

}  // namespace skewscope
