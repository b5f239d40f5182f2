#include "exchange/remote_nat.hpp"

namespace skewscope::exchange {
using translate::turned;

void RemoteTranslations::learn(const WireTranslation& t, std::int64_t now_ns) {
  ++counters_.received;
  auto* known = table_.find(t.original);
  if (known && known->value.to == t.translated && known->value.valid_from_ns == t.valid_from_ns) {
    // The same translation again: its end, or a repeat. An end starts its linger.
    if (t.valid_until_ns != 0 && known->value.valid_until_ns == 0) {
      known->value.valid_until_ns = t.valid_until_ns;
      if (auto* back = table_.find_turned(t.original, known->generation)) back->value.valid_until_ns = t.valid_until_ns;
      table_.linger(t.original, known->generation, now_ns + limits_.linger_ns);
    }
    return;
  }
  // A known tuple with another translation was reused: insert replaces it (the newer wins).
  const auto inserted = table_.insert(t.original, Entry{t.translated, t.valid_from_ns, t.valid_until_ns},
                                      Entry{turned(t.translated), t.valid_from_ns, t.valid_until_ns});
  counters_.evicted_full += inserted.evicted;
  if (t.valid_until_ns != 0) table_.linger(t.original, inserted.generation, now_ns + limits_.linger_ns);
}

std::optional<FlowKey> RemoteTranslations::translate(const FlowKey& flow, std::int64_t realtime_ns) {
  const auto* slot = table_.find(flow);
  if (!slot) return std::nullopt;
  const Entry& e = slot->value;
  const bool started = realtime_ns >= e.valid_from_ns - limits_.slack_ns;
  const bool not_ended = e.valid_until_ns == 0 || realtime_ns <= e.valid_until_ns + limits_.slack_ns;
  if (!started || !not_ended) {
    ++counters_.outside_window;
    return std::nullopt;
  }
  return e.to;
}

void RemoteTranslations::expire(std::int64_t now_ns) { counters_.expired += table_.expire(now_ns); }

}  // namespace skewscope::exchange
