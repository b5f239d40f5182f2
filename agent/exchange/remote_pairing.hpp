// Pairing of the halves this agent consumes from the exchange: one correlator, health window and
// estimator per owned Kafka partition, so that a partition that moves away takes its state with
// it and a partition that arrives starts empty, as DESIGN.md says. No I/O, no threads: the agent
// core calls it under its lock.
//
// Time base (see README.md): nothing here compares two hosts' monotonic clocks. Halves wait in the
// correlator by this agent's monotonic time of arrival; a span's position on the windows' time
// axis is its receive half's wall-clock stamp, mapped into this agent's monotonic base.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "correlate/correlator.hpp"
#include "correlate/kafka_batch_matcher.hpp"
#include "correlate/message_pairing.hpp"
#include "correlate/rdma_pairing.hpp"
#include "correlate/zmtp_message_matcher.hpp"
#include "domains/domain_registry.hpp"
#include "estimate/estimator.hpp"
#include "exchange/exchange_report.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/remote_nat.hpp"
#include "health/captured_addresses.hpp"
#include "health/health_tracker.hpp"
#include "health/pairing_window.hpp"
#include "skewscope/address_set.hpp"

namespace skewscope::exchange {

// What the owned partitions add to the agent's report; the agent core puts it there, so that
// the exchange knows nothing of the report that combines every stage.
struct RemoteResults {
  std::vector<PairReport> pairs;  // one per pair of every owned partition, in no particular order
  std::vector<estimate::PairEstimate> estimates;
  // The clock error bound each remote sender declared for its domains (from its batches).
  std::vector<std::pair<DomainId, std::int64_t>> domain_bounds_ns;
  // The pairing floor over the halves consumed from the exchange, per domain (the senders'
  // domains, interned here): the owner's counterpart of the local PairingWindow's report.
  std::vector<DomainPairing> pairing;
};

inline constexpr std::size_t kMaxRemoteDomains = 1024;

class RemotePairing {
 public:
  RemotePairing(CorrelatorLimits limits, std::int64_t window_ns, estimate::Config estimate_config,
                std::size_t max_remote_domains = kMaxRemoteDomains, PairingFloor floor = {});

  void assign(const std::vector<std::int32_t>& partitions, std::int64_t now_ns);
  void revoke(const std::vector<std::int32_t>& partitions);
  std::vector<std::int32_t> owned() const;

  // `realtime_minus_mono_ns`: this agent's CLOCK_REALTIME - CLOCK_MONOTONIC now.
  void ingest(std::int32_t partition, const WireBatch& batch, std::int64_t now_ns, std::int64_t realtime_minus_mono_ns,
              DomainRegistry& domains);
  // Records the broker no longer had (offset jump): their halves are lost to this partition.
  void note_gap(std::int32_t partition, std::uint64_t records, std::int64_t now_ns);
  // Ages pending halves; `estimate` also re-evaluates the estimators (every --estimate-interval).
  void tick(std::int64_t now_ns, bool estimate);

  // The owned partitions' pairs and estimates. A pair whose partition arrived, or lost halves,
  // less than a window ago is `unknown`: its window is not complete, whatever it holds.
  RemoteResults results(std::int64_t now_ns) const;
  void fill(ExchangeReport& report) const;

  // Kafka spans (transport kafka) paired by the last ingest(), with their topics, for the
  // agent's recent spans; cleared by the call.
  void take_message_spans(std::vector<Span>& spans, std::vector<MessageSpanInfo>& info);

  // Halves re-keyed through a router's translation, to be produced under their new key (the
  // key, and a record per origin domain marked `forwarded`); cleared by the call.
  void take_forwarded(std::vector<std::pair<std::string, WireBatch>>& out);

  std::uint64_t drops(DropReason r) const { return dropped_[static_cast<std::size_t>(r)]; }
  // Addresses no longer learnt because the set of captured peers was full
  // (CapturedAddresses::kMaxAddresses).
  std::uint64_t addresses_not_learned() const { return captured_addresses_.not_learned(); }
  // RDMA pairing of the owned partitions (remote_rdma.cpp), summed.
  RdmaPairingCounters rdma_counters() const;
  static constexpr std::size_t kMaxRdmaHostPairs = 64;  // per partition, each with its own table

 private:
  struct Partition {
    Partition(CorrelatorLimits limits, std::int64_t window_ns, estimate::Config c)
        : correlator(limits), health(window_ns), estimator(c) {}
    Correlator correlator;
    KafkaBatchMatcher kafka;  // Kafka batch halves of this partition's "kafka/TOPIC/PARTITION" keys
    ZmtpMessageMatcher zmtp;  // ZMTP message halves, keyed by host pair like the TCP halves
    std::uint64_t kafka_full_seen = 0;
    HealthTracker health;
    estimate::Estimator estimator;
    std::int64_t owned_since_ns = 0;
    std::optional<std::int64_t> last_loss_ns;
    std::uint64_t table_full_seen = 0;
    // RDMA: one table per unordered GID pair, since QPNs are unique only per device.
    std::map<std::pair<Address, Address>, RdmaPairing> rdma;
  };
  void ingest_rdma(Partition& part, const WireBatch& batch, std::int64_t now_ns);  // appends to spans_
  // One half of a record consumed: the owner's id for its domain index, or nullopt when the
  // remote-domain table was full (counted, and the partition's window marked lossy).
  std::optional<DomainId> consume_domain(Partition& part, std::uint32_t index, std::int64_t now_ns);
  void revoke_rdma(const Partition& part);
  // Translations from routers (remote_nat.hpp): learnt from a record, applied to its halves and
  // to the halves of their flows already waiting in the partition's correlator.
  void learn_translations(Partition& part, const WireBatch& batch, std::int64_t now_ns, const DomainRegistry& domains);
  bool forward_if_translated(const Half& half, const DomainRegistry& domains);
  RemoteTranslations nat_;
  std::map<std::pair<std::string, DomainId>, WireBatch> forwarded_;
  std::size_t forwarded_halves_ = 0;  // waiting in forwarded_, bounded by limits_.max_pending
  std::vector<Half> taken_;
  bool uncertain(const Partition& p, std::int64_t now_ns) const;
  std::optional<std::int64_t> pair_bound(DomainId src, DomainId dst) const;

  CorrelatorLimits limits_;
  std::int64_t window_ns_;
  estimate::Config estimate_config_;
  std::size_t max_remote_domains_;
  std::map<std::int32_t, Partition> partitions_;
  std::unordered_map<DomainId, std::int64_t> domain_bound_ns_;  // from each sender's batches
  std::array<std::uint64_t, static_cast<std::size_t>(DropReason::count_)> dropped_{};
  std::uint64_t halves_consumed_ = 0, records_consumed_ = 0;
  // Every span paired here, over every partition ever owned: a pair's own counts live with its
  // partition and leave with it, so after a hand-over only this total says what this agent paired.
  std::uint64_t spans_paired_ = 0;
  std::uint64_t unpaired_sends_revoked_ = 0;  // from partitions no longer owned
  RdmaPairingCounters rdma_revoked_;          // RDMA counters of partitions no longer owned
  std::vector<Span> spans_;
  // The pairing floor over consumed TCP halves (pairing_window.hpp): a span counts both its
  // halves, an unpaired half (aged-out send, orphaned receive) counts against its domain only when
  // its peer is some consumed half's own address, loopback excepted, as for local halves.
  void learn_captured(const Half& half);
  void count_unpaired(std::int64_t now_ns);
  PairingWindow pairing_window_;
  // Own addresses of consumed halves, by arrival here: an address none has come from for a window
  // (its agent died or left) is no longer taken as captured.
  CapturedAddresses captured_addresses_;
  std::vector<UnpairedHalf> unpaired_;
  std::vector<std::int64_t> delays_ns_;  // ring of the last kDelaySamples pairing delays
  std::size_t next_delay_ = 0;
  static constexpr std::size_t kDelaySamples = 8192;
  std::vector<DomainId> batch_domains_;
  void ingest_messages(Partition& part, const WireBatch& batch, std::int64_t now_ns);
  KafkaMatchCounters kafka_revoked_;  // counters of partitions no longer owned
  ZmtpMatchCounters zmtp_revoked_;
  std::vector<MessageSpanInfo> message_info_;
  std::vector<Span> message_spans_;
};

}  // namespace skewscope::exchange
