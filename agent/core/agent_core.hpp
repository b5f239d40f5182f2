// The agent's stages wired in the order of docs/architecture.md, with no threads and no I/O of its own:
// raw halves -> decode -> domain + clock -> correlate -> health. Production feeds it from the ring
// buffer, tests from a synthetic source; the caller serialises access.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "capture/event_source.hpp"
#include "capture/payload_source.hpp"
#include "core/agent_report.hpp"
#include "core/recent_ring.hpp"
#include "core/wire_pipeline.hpp"
#include "correlate/correlator.hpp"
#include "correlate/message_pairing.hpp"
#include "correlate/rdma_pairing.hpp"
#include "diagnose/pair_history.hpp"
#include "domains/domain_registry.hpp"
#include "domains/simulated_clocks.hpp"
#include "estimate/estimator.hpp"
#include "exchange/core_exchange.hpp"
#include "health/captured_addresses.hpp"
#include "health/health_tracker.hpp"
#include "health/pairing_window.hpp"
#include "skewscope/address_set.hpp"
#include "translate/conntrack_watch.hpp"
#include "translate/nat_table.hpp"

namespace skewscope {

struct AgentCoreConfig {
  CorrelatorLimits limits;
  std::int64_t window_ns = 30'000'000'000;
  double at_risk_share = 0.5;  // at_risk when |offset| >= share x Δt_min
  PairingFloor pairing_floor;  // below it a domain's health is unknown (health/pairing_window.hpp)
  // How often the estimator evaluates every pair and the diagnosis records its history: the
  // floor under the time to a verdict (docs/diagnosis.md), at tens of µs per pair per evaluation.
  std::int64_t estimate_interval_ns = 250'000'000;
};

class AgentCore {
 public:
  AgentCore(DomainRegistry domains, AgentCoreConfig config);

  // The agent's own HTTP endpoint: halves of flows to or from it are not application traffic.
  void set_own_endpoint(std::uint16_t port, std::uint32_t netns_ino) {
    own_port_ = port;
    own_netns_ = netns_ino;
  }

  void ingest(const std::vector<skewscope_half_event>& batch);
  // RDMA verbs records (--rdma, agent_core_rdma.cpp): given a domain and its clock, connections
  // learnt, halves paired by (sender QPN, receiver QPN, ordinal) into `rdma` spans.
  void ingest_rdma(const std::vector<skewscope_rdma_event>& batch);
  void observe_rdma_source(const RdmaSourceCounters& counters) { rdma_source_ = counters; }
  // With --exchange, RDMA halves whose peer GID is not a local address (agent_core_rdma.cpp).
  void take_outgoing_rdma(std::vector<exchange::OutgoingRdmaHalf>& out);
  // The host's clock error bound (from the clock stage) applies to every domain on this kernel.
  void set_clock_bound(std::optional<std::int64_t> bound_ns) { clock_bound_ns_ = bound_ns; }

  // Ages pending halves; call a few times a second with CLOCK_MONOTONIC now.
  void tick(std::int64_t now_ns);
  // The source's counters as read at `now_ns`: kept for reports, and any growth of the lost
  // halves since the last reading marks the health window incomplete.
  void observe_source(std::int64_t now_ns, const SourceCounters& counters);
  // The event source failed: from now on every pair and the overall health are unknown.
  void mark_capture_down(std::string reason);
  bool capture_up() const { return !capture_error_; }

  MonotonicToRealtime& clock_mapping() { return clock_mapping_; }
  // The clock-step watch (runtime/clock_step_watch.hpp) runs: the report shows the steps it woke
  // for, on each of which it calls clock_stepped() (the mapping reads the clocks at once).
  void watch_clock_steps() { clock_step_watch_ = true; }
  void clock_stepped() {
    clock_mapping_.sample_now();
    ++clock_steps_watched_;
  }
  SimulatedClocks& simulated_clocks() { return simulated_; }
  const DomainRegistry& domains() const { return domains_; }
  const estimate::Estimator& estimator() const { return estimator_; }
  // Each pair's recent offset estimates, fed at every estimator tick by tick(), for add_diagnosis().
  const diagnose::HistoryBook& diagnosis_history() const { return diagnosis_history_; }

  // With the counters of the last observe_source().
  AgentReport report(std::int64_t now_ns) const { return report(now_ns, source_); }
  // With `source` shown as the source's counters (benchmarks and tests that drive no source).
  AgentReport report(std::int64_t now_ns, const SourceCounters& source) const;

  // Spans produced by the last ingest() (for stages downstream of health, and for tests).
  const std::vector<Span>& last_spans() const { return spans_; }
  // The most recent spans (bounded), for export with corrected timestamps, each with its topic
  // (Kafka; empty for other transports).
  struct RecentSpan {
    Span span;
    std::string topic{};
    std::int32_t partition = -1;  // Kafka: the batch's partition and record count (OTLP export)
    std::int32_t records = 0;
    // The socket behind the span, when this agent saw it (the OTLP export's network.* and
    // server.* attributes): TCP (and ZeroMQ over TCP) paired here, the flow (sender's socket -> receiver's, as the
    // receiver sees it after --nat-conntrack); Kafka, the consumer's socket (consumer -> broker),
    // also through the exchange. Absent otherwise (TCP halves paired through the exchange, ZMTP
    // messages, RDMA).
    std::optional<FlowKey> socket{};
  };
  const RecentRing<RecentSpan>& recent_spans() const { return recent_; }
  static constexpr std::size_t kRecentSpans = 1024;

  bool pair_at_risk(DomainId src, DomainId dst) const;

  // Address translation (--nat-conntrack): conntrack entries teach the table, and every half's key
  // is mapped to the tuple its other end sees before it is paired or shipped (docs/pairing.md,
  // "Through NAT"). Feed the entries read before a batch of halves first. Without it nothing changes.
  void enable_nat(translate::NatLimits limits);
  void observe_conntrack(const std::vector<translate::ConntrackEntry>& entries, std::int64_t now_ns,
                         const translate::ConntrackWatchReport& watch);

  // Payload capture (--payload-bytes N): message-level spans (kafka, zmtp) from payload records.
  // Without it nothing changes; the spans join the same health, estimate and recent-span path.
  void enable_payload(std::uint32_t max_bytes, MessagePairingLimits limits);
  void ingest_payloads(const std::vector<PayloadRecord>& batch);
  void observe_payload_source(const PayloadCounters& counters);

  // Wire timestamps (--wire-timestamps, core/wire_pipeline.hpp): the wire records the runtime
  // reads are placed in the same domains and clocks as syscall halves, paired per level, and
  // report() gives each pair's health and state from its best level (apply_best_levels).
  // Without it nothing changes.
  void enable_wire(WirePipelineConfig config, const WireSetup& setup);
  bool wire_enabled() const { return wire_.has_value(); }
  void ingest_wire(const std::vector<skewscope_wire_event>& batch);
  void observe_wire_source(std::int64_t now_ns, const WireCounters& counters);
  void tick_wire(std::int64_t now_ns);  // after every wire pass (WirePipeline::tick)
  void add_phc_reading(int phc_index, const clocks::PhcReadingPoint& reading);
  void mark_wire_down(std::string error);

  // The exchange (--exchange): from then on, halves whose two ends are not both owned by this
  // agent's domains go to the outgoing queue instead of the local correlator, and the Kafka
  // thread feeds back the records of the partitions it owns. Without it nothing changes.
  void enable_exchange(exchange::CoreExchangeConfig config);
  bool exchange_enabled() const { return exchange_.has_value(); }
  void set_owned_addresses(std::set<Address> addresses);
  void take_outgoing(std::vector<exchange::OutgoingHalf>& out);  // WireHalf::domain = local DomainId
  bool outbox_half_full() const { return exchange_ && exchange_->outbox_half_full(); }
  // Kafka batch halves for the exchange (with --payload-bytes); WireMessageHalf::domain = local DomainId.
  void take_outgoing_messages(std::vector<exchange::OutgoingMessageHalf>& out);
  void ingest_remote(std::int32_t partition, const exchange::WireBatch& batch, std::int64_t now_ns);
  void assign_partitions(const std::vector<std::int32_t>& partitions, std::int64_t now_ns);
  void revoke_partitions(const std::vector<std::int32_t>& partitions);
  // With both --nat-conntrack and --exchange, every translation learnt is shipped, keyed by its
  // initiator's host pair, for agents that cannot read this namespace (agent_core_nat.cpp); the
  // owners send halves re-keyed through such translations on to their new key.
  void take_outgoing_translations(std::vector<exchange::WireTranslation>& out);
  void take_forwarded(std::vector<std::pair<std::string, exchange::WireBatch>>& out);
  void note_partition_gap(std::int32_t partition, std::uint64_t records, std::int64_t now_ns);

 private:
  bool is_own_traffic(const skewscope_half_event& e) const;
  // The pairing floor's evidence: which addresses are some captured half's own, and how the
  // local correlator's halves paired in the window.
  void learn_local_address(const Half& half);
  void count_unpaired(std::int64_t now_ns);
  CapturedAddresses captured_addresses_;  // forgotten after a window without a half from them
  PairingWindow pairing_window_;
  std::vector<UnpairedHalf> unpaired_;  // reused buffer: correlator -> pairing window

  DomainRegistry domains_;
  AgentCoreConfig config_;
  std::optional<std::uint16_t> own_port_;
  std::uint32_t own_netns_ = 0;
  std::optional<std::int64_t> clock_bound_ns_;
  MonotonicToRealtime clock_mapping_;
  bool clock_step_watch_ = false;
  std::uint64_t clock_steps_watched_ = 0;
  SimulatedClocks simulated_;
  Correlator correlator_;
  HealthTracker health_;
  estimate::Estimator estimator_;
  std::int64_t last_estimate_tick_ns_ = 0;
  diagnose::HistoryBook diagnosis_history_;
  void record_diagnosis_history(std::int64_t now_ns);
  IngestCounters ingest_;
  SourceCounters source_;
  std::uint64_t lost_seen_ = 0;  // lost_halves() at the last observe_source()
  std::optional<std::string> capture_error_;
  std::vector<Span> spans_;
  RecentRing<RecentSpan> recent_{kRecentSpans};
  // The newest recent span: a message's (topic, partition, records; a Kafka consumer's socket) or
  // a TCP span's flow (null: none known).
  void push_recent(const Span& span, const MessageSpanInfo* message, const FlowKey* flow);
  void record_spans(const std::vector<MessageSpanInfo>* info);
  // Capture time -> a domain's clock (what the payload's message spans are stamped in).
  MessagePairing::ToDomainClock message_clock();
  std::vector<FlowKey> span_flows_;  // ingest(): the flow of each span of spans_, for record_spans
  std::optional<MessagePairing> messages_;
  std::optional<PayloadReport> payload_;
  std::vector<MessageSpanInfo> span_info_;
  // ingest(): receive halves whose bytes the kernel did not copy (SKEWSCOPE_HALF_PAYLOAD_MIRRORED),
  // paired at message level after the pass from their sender's parse.
  std::vector<std::pair<Half, bool>> mirrored_;  // and whether the kernel marked it its socket's first
  void pair_mirrored_receives();
  std::optional<exchange::CoreExchange> exchange_;
  std::vector<ShippedKafkaHalf> shipped_;  // reused buffer: MessagePairing -> exchange
  void ship_kafka_halves();
  void exchange_message_halves();
  void record_remote_message_spans();
  std::optional<translate::NatTable> nat_;
  void keep_learnt_translations();
  void ship_learnt_translations();
  std::vector<translate::LearntTranslation> learnt_;
  translate::ConntrackWatchReport nat_watch_;
  std::optional<WirePipeline> wire_;
  RdmaPairing rdma_;
  std::optional<RdmaSourceCounters> rdma_source_;  // set once the RDMA capture runs
  std::uint64_t rdma_outside_domains_ = 0;
  std::uint64_t rdma_no_local_gid_ = 0;  // cross-host halves with no local GID to key them by
  bool ship_rdma(const RdmaHalf& half);  // true: shipped or dropped (counted), not paired here
  // The RDMA path's spans take the same way into health as TCP spans (no message info).
  void add_spans_to_health() { record_spans(nullptr); }
};

}  // namespace skewscope
