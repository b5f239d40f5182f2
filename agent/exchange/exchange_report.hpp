// What /metrics and /api/v1/status show about the exchange. Filled partly by the agent core
// (what it decided: local, shipped, sampled out, partitions and their pairing) and partly by the
// Kafka thread (connection, queue, records), under one snapshot.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "correlate/kafka_batch_matcher.hpp"
#include "correlate/zmtp_message_matcher.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/remote_nat.hpp"

namespace skewscope::exchange {

// Halves that were meant to cross the exchange and did not, by reason.
enum class DropReason : std::uint8_t {
  outbox_full,         // the core's bounded hand-over to the Kafka thread was full
  queue_full,          // librdkafka's byte-bounded produce queue refused the record
  delivery_failed,     // produced but never acknowledged (broker gone, timeout)
  partition_revoked,   // waiting for their other half when their partition moved away
  remote_domain_full,  // the table of remote domain names is full
  pending_full,        // the partition's pairing table was full
  offset_gap,          // records skipped on a partition (the broker no longer had them)
  count_
};
inline const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::outbox_full: return "outbox_full";
    case DropReason::queue_full: return "queue_full";
    case DropReason::delivery_failed: return "delivery_failed";
    case DropReason::partition_revoked: return "partition_revoked";
    case DropReason::remote_domain_full: return "remote_domain_full";
    case DropReason::pending_full: return "pending_full";
    case DropReason::offset_gap: return "offset_gap";
    case DropReason::count_: break;
  }
  return "unknown";
}

inline void add_kafka_counters(KafkaMatchCounters& to, const KafkaMatchCounters& c) {
  to.produced += c.produced;
  to.fetched += c.fetched;
  to.pairs += c.pairs;
  to.paired_records += c.paired_records;
  to.unkeyed += c.unkeyed;
  to.duplicates += c.duplicates;
  to.table_full += c.table_full;
  to.unpaired_produced += c.unpaired_produced;
  to.unpaired_fetched += c.unpaired_fetched;
}

struct ExchangeReport {
  bool connected = false;
  std::string brokers, topic, group;
  std::uint32_t sample_one_in = 1;
  std::vector<std::int32_t> partitions;      // owned now
  std::optional<std::int64_t> consumer_lag;  // records behind the high watermark, owned partitions
  // The mapping shipped halves get their wall-clock time from (the producer's own, sampled every pass).
  MonotonicToRealtime::Stats realtime_mapping;
  std::uint64_t halves_local = 0;        // joined on this host, never shipped
  std::uint64_t halves_sampled_out = 0;  // not shipped by --exchange-sample
  std::uint64_t halves_produced = 0;     // acknowledged by the broker
  std::uint64_t halves_consumed = 0;     // decoded from owned partitions
  std::uint64_t records_produced = 0, records_consumed = 0;
  // Spans paired on this owner since the start, over every partition it has owned: a pair's
  // `spans` restarts when its partition moves (to another agent, or away and back).
  std::uint64_t spans_paired = 0;
  std::uint64_t bytes_produced = 0;  // record values and keys acknowledged by the broker
  // From a half's capture (its receive's wall-clock stamp) to its pairing on this owner, over the
  // last spans paired here: the delay the exchange adds (plus the receiver's clock offset).
  std::optional<double> pairing_delay_p50_seconds, pairing_delay_p99_seconds;
  std::array<std::uint64_t, static_cast<std::size_t>(DropReason::count_)> dropped{};
  std::array<std::uint64_t, static_cast<std::size_t>(RecordReject::count_)> rejected{};
  std::uint64_t unpaired_sends = 0;  // consumed sends never matched on this owner (aged out)
  // Kafka batch halves: shipped by this agent's core, and paired on the partitions it owns.
  std::uint64_t kafka_halves_shipped = 0;
  KafkaMatchCounters kafka_batches;
  // ZMTP message halves paired on the partitions this agent owns (shipped: in halves_produced).
  ZmtpMatchCounters zmtp_messages;
  // Translations from routers: shipped by this agent (it reads a router's conntrack), and the
  // ones held here for the partitions it owns, with the halves they re-keyed (remote_nat.hpp).
  struct Nat {
    std::uint64_t translations_shipped = 0;
    std::uint64_t translations_outbox_full = 0;
    std::size_t translations = 0;  // held now
    RemoteNatCounters owner;
  } nat;
  std::uint64_t remote_domains = 0;
  std::uint64_t local_addresses = 0;
  // Trust (docs/security.md): insecure mode, the keys in use (hex ids, the first signs), failed
  // re-reads of the key files, and the domain names bound to a signer with how many signers.
  bool insecure = false;
  std::vector<std::string> key_ids;
  std::uint64_t key_reload_failures = 0;
  std::uint64_t domains_bound = 0, signers = 0;
  std::string last_error;
};

}  // namespace skewscope::exchange
