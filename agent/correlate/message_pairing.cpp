#include "correlate/message_pairing.hpp"

#include <algorithm>

#include "protocols/kafka/kafka_connection.hpp"
#include "protocols/zmtp/zmtp_stream.hpp"

namespace skewscope {
namespace {

namespace kafka = protocols::kafka;
namespace zmtp = protocols::zmtp;

std::size_t mix(std::size_t h, std::size_t v) { return (h ^ v) * 1099511628211ull; }

// One direction of one connection, as seen by one domain.
struct StreamKey {
  DomainId domain = 0;
  HalfKind kind = HalfKind::send;
  FlowKey flow;
  bool operator==(const StreamKey&) const = default;
};
struct StreamKeyHash {
  std::size_t operator()(const StreamKey& k) const noexcept {
    return mix(mix(FlowKeyHash{}(k.flow), k.domain), static_cast<std::size_t>(k.kind));
  }
};

// A ZMTP message: both ends compute the directed flow and the sequence number of its first byte.
struct MessageKey {
  FlowKey flow;
  std::uint32_t seq = 0;
  bool operator==(const MessageKey&) const = default;
};
struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const noexcept { return mix(FlowKeyHash{}(k.flow), k.seq); }
};

struct PendingHalf {
  DomainId domain = 0;
  std::int64_t capture_ns = 0;
  std::int64_t domain_ns = 0;
  std::uint32_t bytes = 0;
};

struct ZmtpStream {
  zmtp::StreamTracker tracker;
  std::int64_t last_seen_ns = 0;
  std::uint64_t sync_losses = 0, invalid = 0;  // already added to the totals
};

struct KafkaConnection {
  bool client = false;
  kafka::ConnectionTracker tracker;
  std::int64_t last_seen_ns = 0;
  std::uint64_t sync_losses = 0, invalid = 0;
};

using KafkaKey = std::tuple<int, std::string, std::int32_t, std::int64_t, std::int64_t, std::int64_t>;
KafkaKey kafka_key(const kafka::PairingKey& k) {
  return {static_cast<int>(k.kind), k.topic, k.partition, k.a, k.b, k.c};
}

struct Produced {
  PendingHalf half;
  MessageSpanInfo info;
  std::vector<StreamKey> consumers;  // connections that already paired with it
  std::optional<KafkaKey> offset_key;
};

struct Fetched {
  PendingHalf half;
  StreamKey consumer;
  std::optional<KafkaKey> offset_key;
};

}  // namespace

struct MessagePairing::State {
  MessagePairingLimits limits;
  MessagePairingCounters counters;
  std::unordered_map<StreamKey, ZmtpStream, StreamKeyHash> zmtp_streams;
  std::unordered_map<StreamKey, KafkaConnection, StreamKeyHash> kafka_connections;  // kind unused: send
  std::unordered_map<MessageKey, PendingHalf, MessageKeyHash> zmtp_sends, zmtp_recvs;
  std::map<KafkaKey, Produced> produced;
  std::map<KafkaKey, KafkaKey> produced_by_offset;  // offset key -> primary key
  std::multimap<KafkaKey, Fetched> fetched;         // waiting for their produced half
  std::vector<zmtp::Message> messages;
  std::vector<kafka::BatchHalf> batches;

  std::size_t pending() const { return zmtp_sends.size() + zmtp_recvs.size() + produced.size() + fetched.size(); }

  static Span make_span(const PendingHalf& send, const PendingHalf& recv, Transport transport) {
    Span s;
    s.src = send.domain;
    s.dst = recv.domain;
    s.transport = transport;
    s.send_ns = send.domain_ns;
    s.recv_ns = recv.domain_ns;
    s.capture_ns = recv.capture_ns;
    s.bytes = send.bytes;
    return s;
  }

  void add_zmtp(const PayloadChunk& chunk, const ToDomainClock& clock, std::vector<Span>& out,
                std::vector<MessageSpanInfo>& info) {
    const Half& h = chunk.half;
    StreamKey key{h.domain, h.kind, h.flow};
    auto it = zmtp_streams.find(key);
    if (it == zmtp_streams.end()) {
      if (zmtp_streams.size() + kafka_connections.size() >= limits.max_streams) {
        ++counters.streams_refused;
        return;
      }
      it = zmtp_streams.emplace(key, ZmtpStream{}).first;
    }
    ZmtpStream& stream = it->second;
    stream.last_seen_ns = h.capture_ns;
    messages.clear();
    stream.tracker.feed({static_cast<std::uint64_t>(h.capture_ns), h.seq, h.bytes, chunk.prefix}, messages);
    const auto& c = stream.tracker.counters();
    counters.parser_sync_losses += c.sync_losses - stream.sync_losses;
    counters.parser_invalid += c.invalid - stream.invalid;
    stream.sync_losses = c.sync_losses;
    stream.invalid = c.invalid;
    const bool send = h.kind == HalfKind::send;
    for (const auto& m : messages) {
      PendingHalf half;
      half.domain = h.domain;
      // The sender's stamp is the call that wrote its first byte; the receiver's, the call that
      // read its last: the message is whole in the receiver's hands only then.
      half.capture_ns = static_cast<std::int64_t>(send ? m.first_ts_ns : m.last_ts_ns);
      half.domain_ns = clock(h.domain, half.capture_ns);
      half.bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(m.wire_bytes, UINT32_MAX));
      (send ? counters.zmtp_send_messages : counters.zmtp_recv_messages) += 1;
      MessageKey mk{h.flow, m.seq};
      auto& other = send ? zmtp_recvs : zmtp_sends;
      if (auto o = other.find(mk); o != other.end()) {
        out.push_back(send ? make_span(half, o->second, Transport::zmtp) : make_span(o->second, half, Transport::zmtp));
        info.push_back({});
        ++counters.zmtp_pairs;
        other.erase(o);
        continue;
      }
      if (pending() >= limits.max_pending) {
        ++counters.dropped_table_full;
        continue;
      }
      auto& mine = send ? zmtp_sends : zmtp_recvs;
      auto [slot, inserted] = mine.insert_or_assign(mk, half);
      if (!inserted) ++counters.duplicate_halves;
    }
  }

  void emit_kafka(const Produced& p, const PendingHalf& fetched, std::vector<Span>& out,
                  std::vector<MessageSpanInfo>& info) {
    out.push_back(make_span(p.half, fetched, Transport::kafka));
    info.push_back(p.info);
    ++counters.kafka_pairs;
    counters.kafka_paired_records += static_cast<std::uint64_t>(std::max(p.info.records, 0));
  }

  // A fetched batch meets its produced half by the primary key, else by the base offset.
  Produced* find_produced(const std::optional<KafkaKey>& primary, const std::optional<KafkaKey>& offset) {
    if (primary)
      if (auto it = produced.find(*primary); it != produced.end()) return &it->second;
    if (offset)
      if (auto it = produced_by_offset.find(*offset); it != produced_by_offset.end())
        if (auto p = produced.find(it->second); p != produced.end()) return &p->second;
    return nullptr;
  }

  void on_produced(const kafka::BatchHalf& b, DomainId domain, const ToDomainClock& clock, std::vector<Span>& out,
                   std::vector<MessageSpanInfo>& info) {
    ++counters.kafka_produced_batches;
    auto primary = kafka::primary_key(b);
    auto offset = kafka::offset_key(b);
    if (!primary && !offset) {
      ++counters.kafka_unkeyed_batches;
      return;
    }
    const KafkaKey key = kafka_key(primary ? *primary : *offset);
    if (pending() >= limits.max_pending) {
      ++counters.dropped_table_full;
      return;
    }
    Produced p;
    p.half = {domain, static_cast<std::int64_t>(b.ts_ns), clock(domain, static_cast<std::int64_t>(b.ts_ns)), b.batch_bytes};
    p.info = {b.topic, b.partition, b.record_count};
    if (offset) p.offset_key = kafka_key(*offset);
    // A batch is produced once: a second Produce of it (a retry) keeps the first send's time.
    auto [it, inserted] = produced.try_emplace(key, std::move(p));
    if (!inserted) {
      ++counters.duplicate_halves;
      return;
    }
    Produced& slot = it->second;
    if (slot.offset_key) produced_by_offset[*slot.offset_key] = key;
    // Fetches that arrived first (another CPU, another ring-buffer pass).
    auto match = [&](const KafkaKey& k) {
      auto [lo, hi] = fetched.equal_range(k);
      for (auto it = lo; it != hi;) {
        if (std::find(slot.consumers.begin(), slot.consumers.end(), it->second.consumer) == slot.consumers.end()) {
          slot.consumers.push_back(it->second.consumer);
          emit_kafka(slot, it->second.half, out, info);
        }
        it = fetched.erase(it);
      }
    };
    match(key);
    if (slot.offset_key && *slot.offset_key != key) match(*slot.offset_key);
  }

  void on_fetched(const kafka::BatchHalf& b, const StreamKey& consumer, const ToDomainClock& clock,
                  std::vector<Span>& out, std::vector<MessageSpanInfo>& info) {
    ++counters.kafka_fetched_batches;
    auto primary = kafka::primary_key(b);
    auto offset = kafka::offset_key(b);
    if (!primary && !offset) {
      ++counters.kafka_unkeyed_batches;
      return;
    }
    std::optional<KafkaKey> pk, ok;
    if (primary) pk = kafka_key(*primary);
    if (offset) ok = kafka_key(*offset);
    PendingHalf half{consumer.domain, static_cast<std::int64_t>(b.ts_ns),
                     clock(consumer.domain, static_cast<std::int64_t>(b.ts_ns)), b.batch_bytes};
    if (Produced* p = find_produced(pk, ok)) {
      // A batch fetched again by the same consumer (a re-fetch) is one delivery, not two spans.
      if (std::find(p->consumers.begin(), p->consumers.end(), consumer) != p->consumers.end()) {
        ++counters.duplicate_halves;
        return;
      }
      p->consumers.push_back(consumer);
      emit_kafka(*p, half, out, info);
      return;
    }
    if (pending() >= limits.max_pending) {
      ++counters.dropped_table_full;
      return;
    }
    // Waits under its primary key (or its offset key when it has no other).
    fetched.emplace(pk ? *pk : *ok, Fetched{half, consumer, ok});
  }

  void add_kafka(const PayloadChunk& chunk, const ToDomainClock& clock, std::vector<Span>& out,
                 std::vector<MessageSpanInfo>& info) {
    const Half& h = chunk.half;
    const bool send = h.kind == HalfKind::send;
    // One key per socket, whichever direction the chunk moved: (local -> remote).
    FlowKey socket = send ? h.flow : FlowKey{h.flow.dst_addr, h.flow.src_addr, h.flow.dst_port, h.flow.src_port};
    StreamKey key{h.domain, HalfKind::send, socket};
    auto it = kafka_connections.find(key);
    if (it == kafka_connections.end()) {
      if (zmtp_streams.size() + kafka_connections.size() >= limits.max_streams) {
        ++counters.streams_refused;
        return;
      }
      it = kafka_connections.emplace(key, KafkaConnection{}).first;
      it->second.client = send;  // a client speaks first
    }
    KafkaConnection& conn = it->second;
    conn.last_seen_ns = h.capture_ns;
    if (!conn.client) {
      ++counters.kafka_broker_side_chunks;
      return;
    }
    batches.clear();
    conn.tracker.feed(send ? kafka::Direction::kToBroker : kafka::Direction::kFromBroker,
                      {static_cast<std::uint64_t>(h.capture_ns), h.seq, h.bytes, chunk.prefix}, batches);
    const auto& c = conn.tracker.counters();
    counters.parser_sync_losses += c.sync_losses - conn.sync_losses;
    counters.parser_invalid += c.invalid - conn.invalid;
    conn.sync_losses = c.sync_losses;
    conn.invalid = c.invalid;
    for (const auto& b : batches) {
      if (b.side == kafka::BatchHalf::Side::kProduced) {
        on_produced(b, h.domain, clock, out, info);
      } else {
        on_fetched(b, key, clock, out, info);
      }
    }
  }

  void expire(std::int64_t now_ns) {
    const std::int64_t cutoff = now_ns - limits.max_age_ns;
    auto age = [&](auto& table, std::uint64_t& unpaired) {
      for (auto it = table.begin(); it != table.end();) {
        if (it->second.capture_ns < cutoff) {
          ++unpaired;
          it = table.erase(it);
        } else {
          ++it;
        }
      }
    };
    age(zmtp_sends, counters.unpaired_sends);
    age(zmtp_recvs, counters.unpaired_recvs);
    for (auto it = produced.begin(); it != produced.end();) {
      if (it->second.half.capture_ns < cutoff) {
        if (it->second.consumers.empty()) ++counters.unpaired_sends;
        if (it->second.offset_key) produced_by_offset.erase(*it->second.offset_key);
        it = produced.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = fetched.begin(); it != fetched.end();) {
      if (it->second.half.capture_ns < cutoff) {
        ++counters.unpaired_recvs;
        it = fetched.erase(it);
      } else {
        ++it;
      }
    }
    const std::int64_t idle = now_ns - limits.idle_stream_ns;
    std::erase_if(zmtp_streams, [&](const auto& s) { return s.second.last_seen_ns < idle; });
    std::erase_if(kafka_connections, [&](const auto& s) { return s.second.last_seen_ns < idle; });
  }
};

MessagePairing::MessagePairing(MessagePairingLimits limits) : state_(std::make_unique<State>()) {
  state_->limits = limits;
}
MessagePairing::~MessagePairing() = default;
MessagePairing::MessagePairing(MessagePairing&&) noexcept = default;
MessagePairing& MessagePairing::operator=(MessagePairing&&) noexcept = default;

void MessagePairing::add(const PayloadChunk& chunk, const ToDomainClock& clock, std::vector<Span>& out,
                         std::vector<MessageSpanInfo>& info) {
  if (chunk.protocol == PayloadProtocol::zmtp) {
    state_->add_zmtp(chunk, clock, out, info);
  } else {
    state_->add_kafka(chunk, clock, out, info);
  }
}

void MessagePairing::expire(std::int64_t now_ns) { state_->expire(now_ns); }
const MessagePairingCounters& MessagePairing::counters() const { return state_->counters; }
std::size_t MessagePairing::pending() const { return state_->pending(); }

}  // namespace skewscope
