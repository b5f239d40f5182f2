#include "correlate/message_pairing.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "correlate/message_streams.hpp"
#include "correlate/span_runs.hpp"
#include "correlate/zmtp_mirror.hpp"
#include "protocols/kafka/kafka_connection.hpp"
#include "protocols/zmtp/zmtp_stream.hpp"
#include "skewscope/tcp_seq.hpp"

namespace skewscope {
namespace {

namespace kafka = protocols::kafka;
namespace zmtp = protocols::zmtp;

FlowKey reversed(const FlowKey& f) { return {f.dst_addr, f.src_addr, f.dst_port, f.src_port}; }

}  // namespace

struct MessagePairing::State {
  using StreamKey = MessageStreamKey;
  using StreamKeyHash = MessageStreamKeyHash;
  using ZmtpStream = ZmtpPairingStream;
  // A sending stream with a local receiver checks its boundaries against that receiver every
  // kBoundaryCheck runs of them; it keeps at most kMaxBoundaries runs (1 MiB: 65 536 writes of
  // equal messages, or as many messages of changing sizes), and a mirrored receiver at most
  // kMaxMirroredCalls calls.
  static constexpr std::size_t kBoundaryCheck = kZmtpBoundaryCheck;
  static constexpr std::size_t kMaxBoundaries = 1 << 16;
  static constexpr std::size_t kMaxMirroredCalls = 1 << 14;
  std::uint64_t streams_epoch = 1;  // moves on whenever a stream is added or erased
  RecentZmtpStreams recent_streams;
  ZmtpBoundaries no_boundaries;                      // a mirrored receiver's, while no sender is followed
  static constexpr std::size_t kMaxHeldChunks = 64;  // 512 KiB of 8 KiB writes
  static constexpr std::int64_t kMaxHoldNs = 1'000'000'000;

  // A Kafka connection's chunks are all of a client's end: the kernel copies no other
  // (bpf/lib/payload_classify.h: a request sent first, or a socket connected to a named Kafka
  // port, which may be first seen receiving when it is older than the agent).
  struct KafkaConnection {
    kafka::ConnectionTracker tracker;
    std::int64_t last_seen_ns = 0;
    std::uint64_t sync_losses = 0, invalid = 0;
  };

  MessagePairingLimits limits;
  MessagePairingCounters counters;
  std::unordered_map<StreamKey, ZmtpStream, StreamKeyHash> zmtp_streams;
  // The domain of each direction's sending and receiving streams, to find one from the other.
  std::unordered_map<FlowKey, DomainId, FlowKeyHash> zmtp_senders, zmtp_receivers;
  std::size_t holding_senders = 0;  // sending streams with chunks held (ZmtpStream::held)
  std::unordered_map<StreamKey, KafkaConnection, StreamKeyHash> kafka_connections;  // kind unused: send
  ZmtpMessageMatcher zmtp;
  DivertZmtp divert_zmtp;  // --exchange: see message_pairing.hpp
  KafkaBatchMatcher kafka_batches;
  bool ship_kafka = false;                // --exchange: see message_pairing.hpp
  std::vector<ShippedKafkaHalf> shipped;  // taken by the caller after each add()
  std::vector<WaitingFetch> waiting;
  std::int64_t last_overdue_check_ns = 0;
  std::vector<zmtp::Message> messages;
  std::vector<kafka::BatchHalf> batches;

  std::size_t pending() const { return zmtp.pending() + kafka_batches.pending(); }

  void add_zmtp(const PayloadChunk& chunk, const ToDomainClock& clock, std::vector<Span>& out,
                std::vector<MessageSpanInfo>& info) {
    const Half& h = chunk.half;
    const bool send = h.kind == HalfKind::send;
    StreamKey key{h.domain, h.kind, h.flow};
    ZmtpStream* found = find_stream(key);
    if (!found) {
      if (zmtp_streams.size() + kafka_connections.size() >= limits.max_streams) {
        ++counters.streams_refused;
        return;
      }
      found = &zmtp_streams.emplace(key, ZmtpStream{}).first->second;
      ++streams_epoch;
      (send ? zmtp_senders : zmtp_receivers)[h.flow] = h.domain;
    }
    ZmtpStream& stream = *found;
    stream.last_seen_ns = h.capture_ns;
    // In sync and nothing held (the common case), no lookup of the other end.
    if (send) {
      if (!stream.held.empty() || out_of_sync(stream) || gap_before(stream, h)) {
        const auto other = other_end(key);
        // A mirrored receiver parses nothing: no start of its to wait for.
        if (other != zmtp_streams.end() && !other->second.mirrored) {
          other->second.starts_wanted = true;
          if (stream.held.empty()) ++holding_senders;
          stream.held.push_back({h, std::vector<std::uint8_t>(chunk.prefix.begin(), chunk.prefix.end())});
          release_held(key, stream, &other->second, clock, out, info, h.capture_ns);
          return;
        }
        release_held(key, stream, nullptr, clock, out, info, h.capture_ns);  // its receiver went: none waits now
      }
      feed_zmtp(key, stream, h, chunk.prefix, nullptr, clock, out, info);
      return;
    }
    const bool resuming = out_of_sync(stream) || gap_before(stream, h);
    const auto other = resuming || holding_senders > 0 ? other_end(key) : zmtp_streams.end();
    ZmtpStream* sender = other == zmtp_streams.end() ? nullptr : &other->second;
    if (sender && resuming) sender->starts_wanted = true;
    feed_zmtp(key, stream, h, chunk.prefix, sender && resuming ? &sender->starts : nullptr, clock, out, info);
    if (sender && resuming) {
      if (out_of_sync(stream)) {
        sender->starts.forget_before(h.seq + h.bytes);  // room for the starts still ahead of it
      } else {
        sender->starts_wanted = false;
      }
    }
    if (sender && !sender->held.empty()) release_held(other->first, *sender, &stream, clock, out, info, h.capture_ns);
    // A copied call before mirroring began, parsed after the mirrored ones came: they may go on now.
    if (stream.mirrored && !stream.calls.empty())
      resolve_mirrored(key, stream, other_of(key, stream), h.capture_ns, clock, out, info);
  }

  static bool out_of_sync(const ZmtpStream& s) { return s.tracker.state() == zmtp::StreamTracker::State::kOutOfSync; }
  // A stream in sync that this chunk does not continue (a call's record was lost): it is about to
  // lose sync on it, and may resume in it at once.
  static bool gap_before(const ZmtpStream& s, const Half& h) {
    return s.tracker.state() == zmtp::StreamTracker::State::kFrames && h.seq != s.tracker.next_seq();
  }

  // The other end of this stream's direction, when this agent follows it too (both ends local).
  std::unordered_map<StreamKey, ZmtpStream, StreamKeyHash>::iterator other_end(const StreamKey& key) {
    const auto& index = key.kind == HalfKind::send ? zmtp_receivers : zmtp_senders;
    const auto domain = index.find(key.flow);
    if (domain == index.end()) return zmtp_streams.end();
    const HalfKind other = key.kind == HalfKind::send ? HalfKind::recv : HalfKind::send;
    return zmtp_streams.find(StreamKey{domain->second, other, key.flow});
  }

  // The stream of `key`, or null: from the recent ones, else from the table (then remembered).
  ZmtpStream* find_stream(const StreamKey& key) {
    if (ZmtpStream* recent = recent_streams.find(key, streams_epoch)) return recent;
    const auto it = zmtp_streams.find(key);
    if (it == zmtp_streams.end()) return nullptr;
    recent_streams.remember(key, &it->second, streams_epoch);
    return &it->second;
  }

  ZmtpStream* other_of(const StreamKey& key, ZmtpStream& stream) {
    if (stream.other_epoch != streams_epoch) {
      const auto it = other_end(key);
      stream.other = it == zmtp_streams.end() ? nullptr : &it->second;
      if (stream.other) stream.other_domain = it->first.domain;
      stream.other_epoch = streams_epoch;
    }
    return stream.other;
  }

  // Feeds a sending stream's held chunks, oldest first: each once its receiver (null: none any
  // more) has parsed past it, with the receiver's message starts while the sender is out of sync;
  // all of them once the sender is back in sync; the oldest beyond the bounds (more than
  // kMaxHeldChunks, or held longer than kMaxHoldNs by now_ns) without proof.
  void release_held(const StreamKey& key, ZmtpStream& sender, ZmtpStream* receiver, const ToDomainClock& clock,
                    std::vector<Span>& out, std::vector<MessageSpanInfo>& info, std::int64_t now_ns) {
    if (sender.held.empty()) return;
    while (!sender.held.empty()) {
      const Half& front = sender.held.front().half;
      const bool waiting = out_of_sync(sender) || gap_before(sender, front);
      const bool parsed = receiver && receiver->tracker.state() == zmtp::StreamTracker::State::kFrames &&
                          !seq_before(receiver->tracker.next_seq(), front.seq + front.bytes);
      const std::int64_t newest = std::max(now_ns, sender.held.back().half.capture_ns);
      const bool overdue = sender.held.size() > kMaxHeldChunks || newest - front.capture_ns > kMaxHoldNs;
      if (waiting && receiver && !parsed && !overdue) break;
      ZmtpStream::HeldChunk chunk = std::move(sender.held.front());
      sender.held.pop_front();
      feed_zmtp(key, sender, chunk.half, chunk.prefix, waiting && receiver ? &receiver->starts : nullptr, clock, out,
                info);
      if (receiver && out_of_sync(sender)) receiver->starts.forget_before(chunk.half.seq + chunk.half.bytes);
    }
    if (sender.held.empty()) --holding_senders;
    if (receiver && sender.held.empty() && !out_of_sync(sender)) {
      receiver->starts_wanted = false;
    }
  }

  // Parses one chunk of a stream and pairs (or diverts) the messages that end in it.
  void feed_zmtp(const StreamKey& key, ZmtpStream& stream, const Half& h, std::span<const std::uint8_t> prefix,
                 const zmtp::MessageStarts* proven, const ToDomainClock& clock, std::vector<Span>& out,
                 std::vector<MessageSpanInfo>& info) {
    const bool send = h.kind == HalfKind::send;
    messages.clear();
    // The other direction of the same socket, as this domain saw it: its greeting says which
    // version this direction's greeting settles on (a 3.x peer downgrades for a 2.0 one).
    // Found only while the greeting is undecided: a lookup per chunk was a twentieth of the agent's
    // time under request/reply load.
    const zmtp::StreamTracker* peer = nullptr;
    if (stream.tracker.wants_peer_revision()) {
      const auto it = zmtp_streams.find(StreamKey{h.domain, send ? HalfKind::recv : HalfKind::send, reversed(h.flow)});
      if (it != zmtp_streams.end()) peer = &it->second.tracker;
    }
    zmtp::feed_direction(stream.tracker, peer, {static_cast<std::uint64_t>(h.capture_ns), h.seq, h.bytes, prefix},
                         messages, proven);
    const auto& c = stream.tracker.counters();
    counters.parser_sync_losses += c.sync_losses - stream.sync_losses;
    counters.parser_invalid += c.invalid - stream.invalid;
    counters.parser_resyncs_from_other_end += c.resyncs_at_proven_start - stream.resyncs_at_proven_start;
    stream.sync_losses = c.sync_losses;
    stream.invalid = c.invalid;
    stream.resyncs_at_proven_start = c.resyncs_at_proven_start;
    if (stream.starts_wanted) {
      for (const auto& m : messages) stream.starts.record(m.seq, true);
    } else if (!messages.empty()) {
      stream.starts.record(messages.front().seq);
    }
    count_stream_facts(key, stream);
    const std::size_t first_span = out.size();  // this chunk's spans, which a run may join
    if (send) keep_boundaries(key, stream);
    MessageClock stamp{clock, h.domain};
    // The sender's stamp is the call that wrote its first byte; the receiver's, the call that
    // read its last: the message is whole in the receiver's hands only then.
    const auto ts_of = [send](const zmtp::Message& m) {
      return static_cast<std::int64_t>(send ? m.first_ts_ns : m.last_ts_ns);
    };
    const auto bytes_of = [](const zmtp::Message& m) {
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(m.wire_bytes, UINT32_MAX));
    };
    // Offered as runs: consecutive messages of one size and one stamp.
    for (std::size_t i = 0; i < messages.size();) {
      const zmtp::Message& m = messages[i];
      const std::int64_t ts = ts_of(m);
      const std::uint32_t bytes = bytes_of(m);
      std::size_t j = i + 1;
      while (j < messages.size() && ts_of(messages[j]) == ts && bytes_of(messages[j]) == bytes &&
             messages[j].seq == messages[j - 1].seq + bytes)
        ++j;
      offer_run(h, m.seq, bytes, static_cast<std::uint32_t>(j - i), ts, stamp(ts), first_span, out, info);
      i = j;
    }
    if (send) {
      ZmtpStream* receiver = other_of(key, stream);  // cached: no lookup per chunk
      if (receiver && receiver->mirrored && !receiver->calls.empty())
        resolve_mirrored(StreamKey{stream.other_domain, HalfKind::recv, key.flow}, *receiver, &stream, h.capture_ns,
                         clock, out, info);
    }
  }

  // `count` consecutive message halves of `h`'s stream (its kind, domain and flow), `bytes` each
  // from `seq`, sharing one stamp: to the exchange one by one (it keys each message on its own)
  // when halves are diverted, else to the matcher as one run (ZmtpMessageMatcher::add_run). The
  // spans they complete join the chunk's spans from `first_span` when they can (span_runs.hpp).
  void offer_run(const Half& h, std::uint32_t seq, std::uint32_t bytes, std::uint32_t count, std::int64_t ts,
                 std::int64_t time_ns, std::size_t first_span, std::vector<Span>& out,
                 std::vector<MessageSpanInfo>& info) {
    if (!divert_zmtp) {
      match_run(h, seq, bytes, count, ts, time_ns, first_span, out, info);
      return;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      Half half = h;
      half.transport = Transport::zmtp;
      half.seq = seq + i * bytes;
      half.bytes = bytes;
      half.capture_ns = ts;
      half.domain_ns = time_ns;
      if (divert_zmtp(half)) {
        (h.kind == HalfKind::send ? counters.zmtp_send_messages : counters.zmtp_recv_messages) += 1;
        ++counters.zmtp_diverted;
        continue;
      }
      match_run(h, half.seq, bytes, 1, ts, time_ns, first_span, out, info);
    }
  }

  void match_run(const Half& h, std::uint32_t seq, std::uint32_t bytes, std::uint32_t count, std::int64_t ts,
                 std::int64_t time_ns, std::size_t first_span, std::vector<Span>& out,
                 std::vector<MessageSpanInfo>& info) {
    (h.kind == HalfKind::send ? counters.zmtp_send_messages : counters.zmtp_recv_messages) += count;
    const std::size_t others = kafka_batches.pending();
    const std::size_t room = limits.max_pending > others ? limits.max_pending - others : 0;
    const std::size_t before = out.size();
    zmtp.add_run(h.kind, h.flow, seq, count, ZmtpMessageEnd{h.domain, ts, time_ns, bytes}, room, out);
    info.resize(info.size() + join_appended(out, first_span, before));
  }

  // Most of a chunk's messages share its stamp: one clock reading for them.
  struct MessageClock {
    const ToDomainClock& clock;
    DomainId domain;
    std::int64_t ts = 0, read = 0;
    bool valid = false;
    std::int64_t operator()(std::int64_t at) {
      if (!valid || at != ts) {
        read = clock(domain, at);
        ts = at;
        valid = true;
      }
      return read;
    }
  };

  // A sending stream's messages just parsed (this->messages): where they end, kept while its
  // receiver is followed here too. Every kBoundaryCheck new runs of them the receiver is asked how
  // far it got: a copied receiver's parse passed what it read (those need no boundary; they are
  // kept only for the moment it becomes mirrored); a mirrored one takes them itself, up to
  // kMaxBoundaries runs behind.
  void keep_boundaries(const StreamKey& key, ZmtpStream& stream) {
    if (messages.empty()) return;
    // Cached until a stream is added or erased: no lookup per chunk.
    ZmtpStream* receiver = other_of(key, stream);
    if (!receiver) {
      stream.boundaries.clear();
      return;
    }
    for (const auto& m : messages)
      stream.boundaries.push(m.seq, static_cast<std::uint32_t>(std::min<std::uint64_t>(m.wire_bytes, UINT32_MAX)));
    if (stream.boundaries.runs() < stream.next_boundary_check) return;
    if (!receiver->mirrored && receiver->tracker.state() == zmtp::StreamTracker::State::kFrames) {
      const std::uint32_t parsed_to = receiver->tracker.next_seq();
      while (!stream.boundaries.empty() && !seq_before(parsed_to, stream.boundaries.front().end()))
        stream.boundaries.pop_front();
    }
    while (stream.boundaries.runs() > kMaxBoundaries) {
      const std::uint32_t dropped = stream.boundaries.drop_front_run();
      if (receiver->mirrored) counters.zmtp_mirror_boundaries_dropped += dropped;
    }
    stream.next_boundary_check = stream.boundaries.runs() + kBoundaryCheck;
  }

  // Where a receiver's own parse of its copied calls has reached; none before its first byte (a
  // stream the mirrored calls created before the payload ring's records of it were read).
  static std::optional<std::uint32_t> copied_parse_end(const ZmtpStream& receiver) {
    if (receiver.tracker.state() == zmtp::StreamTracker::State::kNew) return std::nullopt;
    return receiver.tracker.next_seq();
  }

  // A mirrored receiver's waiting calls against its sender's boundaries (`sender`: null when no
  // sending stream of the direction is followed here): each message whose last byte a call read
  // gets its receive half, stamped by that call. `now_ns`: the newest capture time known.
  void resolve_mirrored(const StreamKey& key, ZmtpStream& receiver, ZmtpStream* sender, std::int64_t now_ns,
                        const ToDomainClock& clock, std::vector<Span>& out, std::vector<MessageSpanInfo>& info) {
    Half h;
    h.kind = HalfKind::recv;
    h.flow = key.flow;
    h.domain = key.domain;
    MessageClock stamp{clock, key.domain};
    const std::size_t first_span = out.size();
    counters.zmtp_mirror_messages_given_up += receiver.calls.resolve(
        sender ? sender->boundaries : no_boundaries,
        sender ? std::optional<std::uint32_t>(sender->tracker.next_seq()) : std::nullopt, copied_parse_end(receiver),
        now_ns, [&](const ZmtpBoundary& m, std::uint32_t count, const ZmtpMirroredCall& call) {
          offer_run(h, m.seq, m.bytes, count, call.capture_ns, stamp(call.capture_ns), first_span, out, info);
        });
  }

  void add_mirrored(const Half& h, bool first, const ToDomainClock& clock, std::vector<Span>& out,
                    std::vector<MessageSpanInfo>& info) {
    ++counters.zmtp_mirrored_calls;
    StreamKey key{h.domain, HalfKind::recv, h.flow};
    ZmtpStream* found = find_stream(key);
    if (!found) {
      if (zmtp_streams.size() + kafka_connections.size() >= limits.max_streams) {
        ++counters.streams_refused;
        ++counters.zmtp_mirror_unresolved_calls;
        return;
      }
      found = &zmtp_streams.emplace(key, ZmtpStream{}).first->second;
      ++streams_epoch;
      zmtp_receivers[h.flow] = h.domain;
    }
    ZmtpStream& receiver = *found;
    receiver.last_seen_ns = h.capture_ns;
    receiver.mirrored = true;
    ZmtpStream* sender = other_of(key, receiver);
    if (receiver.calls.size() >= kMaxMirroredCalls && receiver.calls.drop_oldest())
      ++counters.zmtp_mirror_unresolved_calls;
    if (!receiver.calls.add({h.seq, h.bytes, h.capture_ns}, first)) ++counters.zmtp_mirror_unresolved_calls;
    resolve_mirrored(key, receiver, sender, h.capture_ns, clock, out, info);
  }

  // Once per stream: the framing its greeting settled on, or why it is not parsed (with the
  // socket, so that the status names it).
  void count_stream_facts(const StreamKey& key, ZmtpStream& stream) {
    const zmtp::StreamTracker& t = stream.tracker;
    if (!stream.framing_counted && t.state() != zmtp::StreamTracker::State::kGreeting &&
        t.framing() != zmtp::Framing::kUndecided && t.counters().greetings > 0) {
      stream.framing_counted = true;
      ++(t.framing() == zmtp::Framing::kZmtp3 ? counters.zmtp_streams_v3 : counters.zmtp_streams_v2);
      counters.zmtp_streams_downgraded += t.counters().downgrades;
    }
    if (!stream.unparsed_counted && t.unparsed_reason()) {
      stream.unparsed_counted = true;
      ++counters.zmtp_unparsed_streams[static_cast<std::size_t>(*t.unparsed_reason())];
      auto& recent = counters.zmtp_unparsed_recent;
      if (recent.size() == kZmtpUnparsedRecent) recent.erase(recent.begin());
      recent.push_back({key.domain, key.kind, key.flow, *t.unparsed_reason()});
    }
  }

  void on_produced(const kafka::BatchHalf& b, DomainId domain, const ToDomainClock& clock, std::vector<Span>& out,
                   std::vector<MessageSpanInfo>& info) {
    const auto ts = static_cast<std::int64_t>(b.ts_ns);
    const KafkaBatchEnd end{domain, ts, clock(domain, ts), b.batch_bytes};
    kafka_batches.produced(b, end, pending() < limits.max_pending, out, info);
    // Consumers on other hosts may read it too: its produced half always goes to the exchange
    // as well; the owner pairs it only with fetches that found no producer here.
    if (ship_kafka) {
      shipped.push_back({b, domain, ts, end.time_ns, {}});
      ++counters.kafka_produced_shipped;
    }
  }

  void on_fetched(const kafka::BatchHalf& b, const StreamKey& consumer, const ToDomainClock& clock,
                  std::vector<Span>& out, std::vector<MessageSpanInfo>& info) {
    const auto ts = static_cast<std::int64_t>(b.ts_ns);
    const KafkaBatchEnd end{consumer.domain, ts, clock(consumer.domain, ts), b.batch_bytes};
    const KafkaConsumerId id{consumer.domain, consumer.flow};
    // With the exchange too, a fetch waits here a short grace first (its local producer's
    // ProduceResponse may still be on its way); ship_overdue() then sends it away. Pairing each
    // fetch in one place only (here or at the owner) is what keeps it from counting twice.
    kafka_batches.fetched(b, end, id, true, pending() < limits.max_pending, out, info);
  }

  void ship_overdue(std::int64_t now_ns) {
    if (!ship_kafka) return;
    waiting.clear();
    kafka_batches.take_fetched_before(now_ns - limits.exchange_fetch_grace_ns, waiting);
    for (auto& w : waiting) {
      shipped.push_back({std::move(w.batch), w.end.domain, w.end.age_ns, w.end.time_ns, w.consumer.socket});
      ++counters.kafka_fetched_shipped;
    }
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
      it = kafka_connections.try_emplace(key).first;
    }
    KafkaConnection& conn = it->second;
    conn.last_seen_ns = h.capture_ns;
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
    // The newest capture time is a lower bound of now; a full scan of the waiting fetches at most
    // every 20 ms keeps the cost per chunk flat.
    if (ship_kafka && h.capture_ns - last_overdue_check_ns >= 20'000'000) {
      last_overdue_check_ns = h.capture_ns;
      ship_overdue(h.capture_ns);
    }
  }

  void expire(std::int64_t now_ns, const ToDomainClock& clock, std::vector<Span>& out,
              std::vector<MessageSpanInfo>& info) {
    // A sending stream out of sync whose chunks wait for a receiver that has gone quiet: past
    // kMaxHoldNs they go on unproven, as they would at the next chunk, before the stream may be
    // dropped as idle with them.
    if (holding_senders > 0) {
      for (auto& [key, stream] : zmtp_streams) {
        if (stream.held.empty() || now_ns - stream.held.front().half.capture_ns <= kMaxHoldNs) continue;
        const auto other = other_end(key);
        release_held(key, stream, other == zmtp_streams.end() ? nullptr : &other->second, clock, out, info, now_ns);
      }
    }
    const std::int64_t cutoff = now_ns - limits.max_age_ns;
    zmtp.expire(cutoff);
    // Mirrored calls: a gap that has waited enough is given up (the calls after it may pair now),
    // then calls whose sender never came age out.
    for (auto& [key, stream] : zmtp_streams) {
      if (stream.calls.empty()) continue;
      resolve_mirrored(key, stream, other_of(key, stream), now_ns, clock, out, info);
      counters.zmtp_mirror_unresolved_calls += stream.calls.expire(cutoff);
    }
    ship_overdue(now_ns);
    kafka_batches.expire(cutoff);
    const std::int64_t idle = now_ns - limits.idle_stream_ns;
    std::erase_if(zmtp_streams, [&](const auto& s) {
      if (s.second.last_seen_ns >= idle) return false;
      // Held chunks went on at kMaxHoldNs (above), long before a stream is idle: none are left
      // here unless the limits say otherwise.
      if (!s.second.held.empty()) --holding_senders;
      counters.zmtp_mirror_unresolved_calls += s.second.calls.size();
      ++streams_epoch;
      auto& index = s.first.kind == HalfKind::send ? zmtp_senders : zmtp_receivers;
      const auto entry = index.find(s.first.flow);
      if (entry != index.end() && entry->second == s.first.domain) index.erase(entry);
      return true;
    });
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

void MessagePairing::add_mirrored_receive(const Half& half, bool first, const ToDomainClock& clock,
                                          std::vector<Span>& out, std::vector<MessageSpanInfo>& info) {
  state_->add_mirrored(half, first, clock, out, info);
}

void MessagePairing::expire(std::int64_t now_ns, const ToDomainClock& clock, std::vector<Span>& out,
                            std::vector<MessageSpanInfo>& info) {
  state_->expire(now_ns, clock, out, info);
}
MessagePairingCounters MessagePairing::counters() const {
  MessagePairingCounters c = state_->counters;
  const ZmtpMatchCounters& z = state_->zmtp.counters();
  c.zmtp_pairs = z.pairs;
  c.duplicate_halves += z.duplicates;
  c.dropped_table_full += z.table_full;
  c.unpaired_sends += z.unpaired_sends;
  c.unpaired_recvs += z.unpaired_recvs;
  const KafkaMatchCounters& k = state_->kafka_batches.counters();
  c.kafka_produced_batches = k.produced;
  c.kafka_fetched_batches = k.fetched;
  c.kafka_pairs = k.pairs;
  c.kafka_paired_records = k.paired_records;
  c.kafka_unkeyed_batches = k.unkeyed;
  c.duplicate_halves += k.duplicates;
  c.dropped_table_full += k.table_full;
  c.unpaired_sends += k.unpaired_produced;
  c.unpaired_recvs += k.unpaired_fetched;
  return c;
}

void MessagePairing::ship_kafka_halves(bool on) { state_->ship_kafka = on; }
void MessagePairing::divert_zmtp_halves(DivertZmtp divert) { state_->divert_zmtp = std::move(divert); }
void MessagePairing::take_shipped(std::vector<ShippedKafkaHalf>& out) {
  out.clear();
  out.swap(state_->shipped);
}
std::size_t MessagePairing::pending() const { return state_->pending(); }

}  // namespace skewscope
