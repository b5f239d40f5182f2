#include "translate/nat_table.hpp"

namespace skewscope::translate {

namespace {

constexpr std::uint8_t kTcp = 6;

}  // namespace

void NatTable::observe(const ConntrackEntry& entry, std::int64_t now_ns) {
  if (entry.protocol != kTcp) {
    ++counters_.entries_other_protocol;
    return;
  }
  if (!entry.translated()) {
    if (entry.change == ConntrackChange::present) ++counters_.entries_plain;
    return;
  }
  if (entry.change == ConntrackChange::destroyed) {
    const auto* slot = table_.find(entry.original);
    if (!slot) return;  // evicted already, or learnt before this agent started
    ++counters_.destroyed;
    note_learnt({entry.original, slot->value.to, slot->value.learnt_ns, now_ns});
    table_.linger(entry.original, slot->generation, now_ns + limits_.linger_ns);
    return;
  }
  learn(entry, now_ns);
}

void NatTable::note_learnt(const LearntTranslation& t) {
  if (max_learnt_ == 0) return;
  if (learnt_.size() >= max_learnt_) {
    ++counters_.learnt_dropped;
    return;
  }
  learnt_.push_back(t);
}

void NatTable::learn(const ConntrackEntry& entry, std::int64_t now_ns) {
  // The first packet's tuple after translation, as the responder's socket sees it.
  const FlowKey responder = turned(entry.reply);
  const auto* known = table_.find(entry.original);
  if (known && known->value.to == responder) return;  // an update, or a dump of a known entry
  // A known tuple with another translation was reused: insert replaces it.
  counters_.evicted_full += table_.insert(entry.original, {responder, now_ns}, {turned(responder), now_ns}).evicted;
  note_learnt({entry.original, responder, now_ns, 0});
  ++counters_.entries_translated;
}

bool NatTable::translate(FlowKey& flow) {
  if (table_.empty()) return false;
  bool changed = false;
  for (int hop = 0; hop < kMaxHops; ++hop) {
    const auto* slot = table_.find(flow);
    if (!slot) {
      if (changed) ++counters_.halves_translated;
      return changed;
    }
    flow = slot->value.to;
    changed = true;
  }
  ++counters_.halves_translated;
  if (table_.find(flow)) ++counters_.hop_limit;
  return true;
}

void NatTable::expire(std::int64_t now_ns) { counters_.expired += table_.expire(now_ns); }

}  // namespace skewscope::translate
