// Translations from a router, on the owner of the initiator's halves (README.md, "Translations
// from a router"): the table of what routers' agents shipped, and the lookup that re-keys a half
// to the tuple its other end sees. No I/O; RemotePairing calls it under the core's lock.
//
// Bounded like the local NatTable (translate/nat_table.hpp): a full table evicts its oldest
// translation (counted); one whose end is known is forgotten a linger after it arrived here (its
// halves may still be on their way), one that never got an end stays until evicted. A half is
// re-keyed only while its wall-clock stamp lies in the translation's validity, widened by a slack
// for the clocks of router and host (a reused tuple then takes the translation of its own time).
#pragma once

#include <cstdint>
#include <optional>

#include "exchange/nat_record_codec.hpp"
#include "skewscope/half.hpp"
#include "translate/two_way_flow_table.hpp"

namespace skewscope::exchange {

struct RemoteNatLimits {
  std::size_t max_translations = 65'536;
  std::int64_t linger_ns = 10'000'000'000;  // after an ended translation arrived here
  std::int64_t slack_ns = 5'000'000'000;    // around its validity, for clock differences
};

struct RemoteNatCounters {
  std::uint64_t received = 0;           // translations in consumed records (a start or an end)
  std::uint64_t evicted_full = 0;       // dropped because the table was full
  std::uint64_t expired = 0;            // forgotten a linger after their end
  std::uint64_t outside_window = 0;     // halves of a known tuple stamped outside its validity
  std::uint64_t halves_forwarded = 0;   // re-keyed and sent on to the owner of their new key
  std::uint64_t halves_taken_back = 0;  // of those, halves that had arrived before the translation
};

class RemoteTranslations {
 public:
  explicit RemoteTranslations(RemoteNatLimits limits = {}) : limits_(limits), table_(limits.max_translations) {}

  // `now_ns`: this agent's CLOCK_MONOTONIC at arrival.
  void learn(const WireTranslation& t, std::int64_t now_ns);
  // The tuple the other end sees for a half keyed `flow`, stamped `realtime_ns` by its domain's
  // clock; nullopt when no translation holds it then.
  std::optional<FlowKey> translate(const FlowKey& flow, std::int64_t realtime_ns);
  void expire(std::int64_t now_ns);

  bool empty() const { return table_.empty(); }
  std::size_t translations() const { return table_.connections(); }
  RemoteNatCounters& counters() { return counters_; }
  const RemoteNatCounters& counters() const { return counters_; }

 private:
  struct Entry {
    FlowKey to;
    std::int64_t valid_from_ns = 0;
    std::int64_t valid_until_ns = 0;  // 0: open
  };

  RemoteNatLimits limits_;
  translate::TwoWayFlowTable<Entry> table_;  // both directions of each translation
  RemoteNatCounters counters_;
};

}  // namespace skewscope::exchange
