// The agent core's part in translations across hosts (agent/exchange/README.md, "Translations
// from a router"): what a router's agent learns from conntrack leaves over the exchange, and the
// halves an owner re-keyed through such a translation leave again under their new key.
#include "core/agent_core.hpp"

namespace skewscope {

void AgentCore::keep_learnt_translations() {
  // Only an agent that both reads conntrack and exchanges halves ships what it learns; the
  // hand-over to the Kafka thread bounds it, so the table keeps at most that many waiting.
  if (nat_ && exchange_) nat_->keep_learnt(exchange::CoreExchangeConfig{}.outbox_limit);
}

void AgentCore::ship_learnt_translations() {
  if (!nat_ || !exchange_) return;
  nat_->take_learnt(learnt_);
  // Wall-clock times of this host, without a domain's simulated error: the owner widens them by
  // a slack far larger than any clock difference the lab simulates.
  for (const auto& t : learnt_)
    exchange_->ship_translation(
        exchange::WireTranslation{t.original, t.translated, clock_mapping_.to_realtime(t.learnt_ns),
                                  t.ended_ns != 0 ? clock_mapping_.to_realtime(t.ended_ns) : 0});
}

void AgentCore::take_outgoing_translations(std::vector<exchange::WireTranslation>& out) {
  if (exchange_) {
    exchange_->take_outgoing_translations(out);
  } else {
    out.clear();
  }
}

void AgentCore::take_forwarded(std::vector<std::pair<std::string, exchange::WireBatch>>& out) {
  if (exchange_) {
    exchange_->pairing().take_forwarded(out);
  } else {
    out.clear();
  }
}

}  // namespace skewscope
