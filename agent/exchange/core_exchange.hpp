// The agent core's side of the exchange, with no I/O: which halves leave (not local, sampled in),
// the bounded hand-over to the Kafka thread, and the pairing of what comes back.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "exchange/exchange_report.hpp"
#include "exchange/flow_keys.hpp"
#include "exchange/local_addresses.hpp"
#include "exchange/message_record_codec.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/remote_pairing.hpp"

namespace skewscope::exchange {

// A half on its way out. Its wall-clock time is fixed by the Kafka thread with its own mapping,
// sampled every few ms (capture/clock_mapping.hpp): a clock step is then placed to within that
// interval rather than the core's 100 ms, and two agents on one kernel agree to within their
// tightest clock readings, however noisy their reads.
struct OutgoingHalf {
  WireHalf wire;                    // realtime_ns: the core's own mapping, used if no sample covers it
  std::int64_t capture_ns = 0;      // CLOCK_MONOTONIC at capture
  std::int64_t clock_error_ns = 0;  // the domain's simulated clock error at capture (lab)
};

// An RDMA half on its way out (agent_core_rdma.cpp); its wall-clock time is fixed the same way.
struct OutgoingRdmaHalf {
  WireRdmaHalf wire;
  std::int64_t capture_ns = 0;
  std::int64_t clock_error_ns = 0;
};

// A Kafka batch half on its way out (keyed by topic-partition, see message_record_codec.hpp);
// its wall-clock time is fixed like an OutgoingHalf's.
struct OutgoingMessageHalf {
  WireMessageHalf wire;  // domain: the local DomainId
  std::int64_t capture_ns = 0;
  std::int64_t clock_error_ns = 0;
};

struct CoreExchangeConfig {
  std::uint32_t sample_one_in = 1;
  std::size_t outbox_limit = 1 << 17;  // halves waiting for the Kafka thread (~10 MB at most)
};

class CoreExchange {
 public:
  CoreExchange(CoreExchangeConfig config, RemotePairing pairing) : config_(config), pairing_(std::move(pairing)) {}

  // True when the half is not for local pairing: queued for the exchange, or sampled out, or
  // dropped (counted) because the hand-over is full. Never blocks.
  bool divert(const Half& half, std::int64_t clock_error_ns) {
    if (owned_.is_local(half.flow)) {
      ++local_;
      return false;
    }
    if (!flow_sampled(half.flow, config_.sample_one_in)) {
      ++sampled_out_;
      return true;
    }
    if (outbox_.size() >= config_.outbox_limit) {
      ++outbox_full_;
      return true;
    }
    outbox_.push_back(
        OutgoingHalf{WireHalf{half.kind, half.transport, half.flow, half.seq, half.bytes, half.domain_ns, half.domain},
                     half.capture_ns, clock_error_ns});
    return true;
  }

  // RDMA: the caller decided the half leaves (its peer GID is no local address). Not sampled:
  // --exchange-sample applies to TCP flows. Shares the hand-over bound with TCP halves.
  bool owns(const Address& a) const { return owned_.owns(a); }
  void ship_rdma(const OutgoingRdmaHalf& half) {
    if (outbox_.size() + rdma_outbox_.size() >= config_.outbox_limit) {
      ++outbox_full_;
      return;
    }
    rdma_outbox_.push_back(half);
    ++rdma_shipped_;
  }
  void take_outgoing_rdma(std::vector<OutgoingRdmaHalf>& out) {
    out.clear();
    out.swap(rdma_outbox_);
  }
  std::uint64_t rdma_shipped() const { return rdma_shipped_; }
  // A Kafka batch half to ship (MessagePairing decided it leaves); dropped, counted, when the
  // hand-over is full.
  void ship_message(OutgoingMessageHalf half) {
    if (message_outbox_.size() >= config_.outbox_limit) {
      ++outbox_full_;
      return;
    }
    ++messages_shipped_;
    message_outbox_.push_back(std::move(half));
  }
  void take_outgoing_messages(std::vector<OutgoingMessageHalf>& out) {
    out.clear();
    out.swap(message_outbox_);
  }

  // A translation learnt from a router's conntrack (--nat-conntrack with --exchange), for the owner
  // of its initiator's host pair; dropped, counted, when the hand-over is full.
  void ship_translation(const WireTranslation& t) {
    if (translation_outbox_.size() >= config_.outbox_limit) {
      ++translations_outbox_full_;
      return;
    }
    ++translations_shipped_;
    translation_outbox_.push_back(t);
  }
  void take_outgoing_translations(std::vector<WireTranslation>& out) {
    out.clear();
    out.swap(translation_outbox_);
  }

  // Halves waiting for the Kafka thread, against the bound past which they are dropped.
  bool outbox_half_full() const { return 2 * outbox_.size() >= config_.outbox_limit; }
  // The halves to ship; WireHalf::domain holds the local DomainId.
  void take_outgoing(std::vector<OutgoingHalf>& out) {
    out.clear();
    out.swap(outbox_);
  }
  void set_owned(std::set<Address> addresses) { owned_.replace(std::move(addresses)); }
  RemotePairing& pairing() { return pairing_; }
  const RemotePairing& pairing() const { return pairing_; }

  void fill(ExchangeReport& r) const {
    r.sample_one_in = config_.sample_one_in;
    r.halves_local = local_;
    r.halves_sampled_out = sampled_out_;
    r.dropped[static_cast<std::size_t>(DropReason::outbox_full)] += outbox_full_;
    r.local_addresses = owned_.size();
    r.kafka_halves_shipped = messages_shipped_;
    r.nat.translations_shipped = translations_shipped_;
    r.nat.translations_outbox_full = translations_outbox_full_;
    pairing_.fill(r);
  }

 private:
  CoreExchangeConfig config_;
  OwnedAddresses owned_;
  RemotePairing pairing_;
  std::vector<OutgoingHalf> outbox_;
  std::vector<OutgoingRdmaHalf> rdma_outbox_;
  std::uint64_t rdma_shipped_ = 0;
  std::vector<OutgoingMessageHalf> message_outbox_;
  std::uint64_t messages_shipped_ = 0;
  std::vector<WireTranslation> translation_outbox_;
  std::uint64_t translations_shipped_ = 0, translations_outbox_full_ = 0;
  std::uint64_t local_ = 0, sampled_out_ = 0, outbox_full_ = 0;
};

}  // namespace skewscope::exchange
