// The meeting point of Kafka record batches: produced halves (a producer's Produce request) and
// fetched halves (a consumer's Fetch response) of the same batch, matched by
// protocols::kafka::primary_key, with the offset key as the fallback for batches the broker
// rewrote. One table serves the agent's local pairing (MessagePairing) and each partition an
// agent owns in the exchange (exchange::RemotePairing): the matching rule lives here only.
//
// A produced batch pairs once with each consumer (a consumer = a domain and its socket), so a
// batch read by several consumers gives one span per consumer, and a re-fetch by the same
// consumer gives none. Both sides wait in bounded tables, aged by the caller's clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "protocols/kafka/kafka_connection.hpp"
#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

// One end of a batch as the matcher keeps it.
struct KafkaBatchEnd {
  DomainId domain = 0;
  std::int64_t age_ns = 0;   // the caller's clock for aging (capture or arrival time)
  std::int64_t time_ns = 0;  // the domain clock's wall-clock reading: the span's end
  std::uint32_t bytes = 0;
};

// Who fetched: the consumer's domain and its socket (local -> remote). Two consumers of one batch
// differ by socket even in one domain.
struct KafkaConsumerId {
  DomainId domain = 0;
  FlowKey socket;
  bool operator==(const KafkaConsumerId&) const = default;
};

// A Kafka span's topic, beside the span it belongs to (JSON only, never a metric label).
struct MessageSpanInfo {
  std::string topic;
  std::int32_t partition = -1;
  std::int32_t records = 0;
  // Kafka: the consumer's socket (consumer -> broker), for the OTLP export's server.address; port
  // 0 when the fetch was not seen on a socket of this agent's.
  FlowKey consumer_socket{};
};

struct KafkaMatchCounters {
  std::uint64_t produced = 0, fetched = 0;  // halves offered
  std::uint64_t pairs = 0;
  std::uint64_t paired_records = 0;  // records in the paired batches
  std::uint64_t unkeyed = 0;         // no pairing key (e.g. LogAppendTime without offset)
  std::uint64_t duplicates = 0;      // a second produced half, or a re-fetch by one consumer
  std::uint64_t table_full = 0;
  std::uint64_t unpaired_produced = 0;  // aged out without any consumer
  std::uint64_t unpaired_fetched = 0;   // aged out: its produced half never came
};

// A fetched half that waited and is handed back (see take_fetched_before).
struct WaitingFetch {
  protocols::kafka::BatchHalf batch;
  KafkaBatchEnd end;
  KafkaConsumerId consumer;
};

class KafkaBatchMatcher {
 public:
  enum class Fetch : std::uint8_t { paired, duplicate, waiting, not_found, unkeyed, table_full };

  // Produced half: pairs with fetched halves already waiting, then waits for later ones.
  // `room`: whether the caller's bound on pending halves allows one more.
  void produced(const protocols::kafka::BatchHalf& b, const KafkaBatchEnd& end, bool room, std::vector<Span>& out,
                std::vector<MessageSpanInfo>& info);
  // Fetched half: pairs with its produced half if present; else waits when `wait` (and room),
  // or is left to the caller (not_found) when it is to be paired elsewhere.
  Fetch fetched(const protocols::kafka::BatchHalf& b, const KafkaBatchEnd& end, const KafkaConsumerId& consumer,
                bool wait, bool room, std::vector<Span>& out, std::vector<MessageSpanInfo>& info);
  // Forgets halves whose age_ns is before cutoff_ns (counted unpaired).
  void expire(std::int64_t cutoff_ns);
  // Removes the fetched halves still waiting whose age_ns is before cutoff_ns and hands them to
  // the caller (not counted unpaired: the caller pairs them elsewhere).
  void take_fetched_before(std::int64_t cutoff_ns, std::vector<WaitingFetch>& out);

  std::size_t pending() const { return produced_.size() + fetched_.size(); }
  std::size_t pending_fetched() const { return fetched_.size(); }
  const KafkaMatchCounters& counters() const { return counters_; }

 private:
  using Key = std::tuple<int, std::string, std::int32_t, std::int64_t, std::int64_t, std::int64_t>;
  struct Produced {
    KafkaBatchEnd end;
    MessageSpanInfo info;
    std::vector<KafkaConsumerId> consumers;  // that already paired with it
    std::optional<Key> offset_key;
  };
  struct Fetched {
    KafkaBatchEnd end;
    KafkaConsumerId consumer;
    protocols::kafka::BatchHalf batch;  // for take_fetched_before
  };
  static Key key_of(const protocols::kafka::PairingKey& k);
  Produced* find(const std::optional<Key>& primary, const std::optional<Key>& offset);
  void emit(Produced& p, const KafkaBatchEnd& fetched, const KafkaConsumerId& consumer, std::vector<Span>& out,
            std::vector<MessageSpanInfo>& info);

  KafkaMatchCounters counters_;
  std::map<Key, Produced> produced_;
  std::map<Key, Key> produced_by_offset_;  // offset key -> primary key
  std::multimap<Key, Fetched> fetched_;    // waiting for their produced half
};

}  // namespace skewscope
