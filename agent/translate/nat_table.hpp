// Address translation undone for pairing: the tuple a translated connection has where its halves
// were captured, mapped to the tuple the other end sees, learnt from conntrack entries.
//
// A connection whose first packet left as A:a -> B:b and arrived, after DNAT/SNAT/MASQUERADE, as
// D:d -> C:c (conntrack: original A:a -> B:b, reply C:c -> D:d) has halves keyed A:a -> B:b and
// B:b -> A:a on the initiator's side, D:d -> C:c and C:c -> D:d on the responder's. The table maps
// the initiator's two directed keys to the responder's, so both ends' halves meet under one key.
// Translations in several namespaces on the way (a client's DNAT, then a router's MASQUERADE)
// compose: a key is mapped again while a mapping for the result exists (at most kMaxHops times).
// Bounded: a full table evicts its oldest mapping (counted); a destroyed entry lingers a while so
// halves still in the ring buffer are translated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "skewscope/half.hpp"
#include "translate/conntrack_message.hpp"
#include "translate/two_way_flow_table.hpp"

namespace skewscope::translate {

struct NatLimits {
  std::size_t max_mappings = 65'536;  // connections; each holds two directed keys
  // How long a destroyed entry still translates: the halves of its last bytes may still wait in
  // the ring buffer (read every 20 ms) when its DELETE event is read.
  std::int64_t linger_ns = 10'000'000'000;
};

// A translation learnt or ended, for agents that cannot read this namespace (README of
// agent/exchange, "Translations from a router"): times in this host's CLOCK_MONOTONIC.
struct LearntTranslation {
  FlowKey original;
  FlowKey translated;  // the first packet's tuple as the responder sees it
  std::int64_t learnt_ns = 0;
  std::int64_t ended_ns = 0;  // 0: still held
};

struct NatCounters {
  std::uint64_t entries_translated = 0;  // TCP entries with a translation, learnt (new or replaced)
  std::uint64_t entries_plain = 0;       // TCP entries without one: nothing to learn
  std::uint64_t entries_other_protocol = 0;
  std::uint64_t destroyed = 0;     // translated entries the kernel deleted (then lingering)
  std::uint64_t evicted_full = 0;  // mappings dropped because the table was full
  std::uint64_t expired = 0;       // mappings removed after their linger
  std::uint64_t halves_translated = 0;
  std::uint64_t hop_limit = 0;       // keys still mapped after kMaxHops steps (a loop of mappings)
  std::uint64_t learnt_dropped = 0;  // translations not kept for shipping: the list was full
};

class NatTable {
 public:
  static constexpr int kMaxHops = 4;

  explicit NatTable(NatLimits limits = {}) : limits_(limits), table_(limits.max_mappings) {}

  void observe(const ConntrackEntry& entry, std::int64_t now_ns);
  // Replaces `flow` by the key the other end sees; false (flow unchanged) when no mapping holds it.
  bool translate(FlowKey& flow);
  void expire(std::int64_t now_ns);
  // Keep every translation learnt or ended from now on, at most `max_waiting` until taken (the
  // rest counted in learnt_dropped), for the exchange to ship to other agents.
  void keep_learnt(std::size_t max_waiting) { max_learnt_ = max_waiting; }
  void take_learnt(std::vector<LearntTranslation>& out) {
    out.clear();
    out.swap(learnt_);
  }

  bool empty() const { return table_.empty(); }
  std::size_t mappings() const { return table_.keys() / 2; }
  const NatCounters& counters() const { return counters_; }

 private:
  struct Mapping {
    FlowKey to;
    std::int64_t learnt_ns = 0;
  };

  void learn(const ConntrackEntry& entry, std::int64_t now_ns);
  void note_learnt(const LearntTranslation& t);

  NatLimits limits_;
  TwoWayFlowTable<Mapping> table_;
  NatCounters counters_;
  std::size_t max_learnt_ = 0;  // 0: nothing kept (no exchange)
  std::vector<LearntTranslation> learnt_;
};

}  // namespace skewscope::translate
