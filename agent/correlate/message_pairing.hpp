// Message-level spans from payload chunks: one span per ZeroMQ message (transport zmtp) and one
// per Kafka record batch, producer send -> consumer receive across the broker (transport kafka).
//
// ZMTP: each direction of each connection is framed by a protocols::zmtp::StreamTracker, told the
// version the other direction of the same socket announced (a 3.x peer downgrades to 2.0 for a
// 2.0 one). A message is keyed by (directed 4-tuple, TCP sequence number of its first byte), which
// both ends compute (ZmtpMessageMatcher): the send half is stamped by the chunk holding its first
// byte (syscall entry), the receive half by the chunk holding its last byte (syscall exit), so
// with one clock a span is never negative.
//
// Kafka: each client connection is followed by a protocols::kafka::ConnectionTracker. A
// connection's role comes from its first chunk: a socket whose first traced call sends is a client
// (its sends are requests); one whose first call receives is a broker's (or a forwarder's
// listening side) and is not followed: the broker's own halves are not ends of a producer ->
// consumer span. Produced batches (client sends) and fetched batches (client receives) meet by
// protocols::kafka::primary_key (topic, partition, producer id, epoch, base sequence; or CRC;
// or base offset), with the offset key as the fallback for recompressed batches. A produced batch
// pairs once with each consuming connection.
//
// Both sides wait in bounded, aged tables; every drop is counted.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "capture/payload_decode.hpp"
#include "correlate/kafka_batch_matcher.hpp"
#include "correlate/zmtp_message_matcher.hpp"
#include "protocols/zmtp/zmtp_stream.hpp"
#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

inline constexpr std::size_t kZmtpUnparsedRecent = 16;

struct MessagePairingLimits {
  std::size_t max_streams = 16384;                // followed connection directions (ZMTP) / connections (Kafka)
  std::size_t max_pending = 1 << 18;              // message halves waiting, both protocols
  std::int64_t max_age_ns = 10'000'000'000;       // a half not paired within this is counted unpaired
  std::int64_t idle_stream_ns = 120'000'000'000;  // a stream silent this long is forgotten
  // With the exchange: how long a fetched Kafka half waits here for its produced half (a local
  // producer's ProduceResponse may come after a local consumer's fetch) before it is shipped.
  std::int64_t exchange_fetch_grace_ns = 300'000'000;
};

// A ZMTP stream (one direction of a socket, as one domain saw it) that is not parsed, and why.
struct ZmtpUnparsedStream {
  DomainId domain = 0;
  HalfKind kind = HalfKind::send;
  FlowKey flow;  // sender -> receiver of the direction
  protocols::zmtp::UnparsedReason reason = protocols::zmtp::UnparsedReason::kNotAGreeting;
};

struct MessagePairingCounters {
  std::uint64_t zmtp_send_messages = 0;
  std::uint64_t zmtp_recv_messages = 0;
  std::uint64_t zmtp_pairs = 0;
  std::uint64_t zmtp_diverted = 0;  // --exchange: halves of other hosts' messages, paired by the exchange
  // ZMTP streams by the framing their greeting settled on; 2.0 includes the downgraded ones.
  std::uint64_t zmtp_streams_v3 = 0;
  std::uint64_t zmtp_streams_v2 = 0;
  std::uint64_t zmtp_streams_downgraded = 0;  // announced 3.x, spoke 2.0 for a 2.0 peer
  std::array<std::uint64_t, protocols::zmtp::kUnparsedReasons> zmtp_unparsed_streams{};  // by reason
  std::vector<ZmtpUnparsedStream> zmtp_unparsed_recent;  // the latest kZmtpUnparsedRecent of them
  std::uint64_t kafka_produced_batches = 0;
  std::uint64_t kafka_fetched_batches = 0;
  std::uint64_t kafka_pairs = 0;
  std::uint64_t kafka_paired_records = 0;   // records in the paired batches
  std::uint64_t kafka_unkeyed_batches = 0;  // no pairing key (e.g. LogAppendTime without offset)
  std::uint64_t unpaired_sends = 0;         // aged out: never received (or receiver not traced)
  std::uint64_t unpaired_recvs = 0;         // aged out: the sender's half never came
  std::uint64_t duplicate_halves = 0;       // a second half with the same key (replaced)
  std::uint64_t dropped_table_full = 0;
  std::uint64_t streams_refused = 0;     // max_streams reached: chunks of new streams ignored
  std::uint64_t parser_sync_losses = 0;  // summed from the trackers
  std::uint64_t parser_invalid = 0;
  std::uint64_t parser_resyncs_from_other_end = 0;  // ZMTP streams back in sync at a start the other end proved
  std::uint64_t kafka_produced_shipped = 0;         // --exchange: produced halves also sent to the exchange
  std::uint64_t kafka_fetched_shipped = 0;          // --exchange: fetched halves with no producer here, sent
  // One copy for both ends (correlate/zmtp_mirror.hpp): receive calls whose bytes were not copied,
  // their sender's parse here naming their messages.
  std::uint64_t zmtp_mirrored_calls = 0;
  // Mirrored calls given up before the sender's parse reached them (aged out, over the bound, or
  // no stream for them): a message they ended has no receive half.
  std::uint64_t zmtp_mirror_unresolved_calls = 0;
  // Where a sender's messages end, dropped unread because its mirrored receiver lagged more than
  // the bound behind: those messages have no receive half.
  std::uint64_t zmtp_mirror_boundaries_dropped = 0;
  // Messages that ended in a gap of a mirrored receiver's calls (a call's half lost) given up.
  std::uint64_t zmtp_mirror_messages_given_up = 0;
};

// A Kafka batch half for the exchange (--exchange): its batch, domain and times.
struct ShippedKafkaHalf {
  protocols::kafka::BatchHalf batch;
  DomainId domain = 0;
  std::int64_t capture_ns = 0;  // CLOCK_MONOTONIC at capture
  std::int64_t domain_ns = 0;   // the domain clock's wall-clock reading at capture
  FlowKey socket;               // fetched: the consumer's socket (local -> remote); produced: unset
};

class MessagePairing {
 public:
  using ToDomainClock = std::function<std::int64_t(DomainId, std::int64_t capture_ns)>;

  explicit MessagePairing(MessagePairingLimits limits = {});
  ~MessagePairing();
  MessagePairing(MessagePairing&&) noexcept;
  MessagePairing& operator=(MessagePairing&&) noexcept;

  // Feeds one chunk of `domain` (half.domain set); spans it completes are appended to `out` and,
  // for each, its info to `info` (same index).
  void add(const PayloadChunk& chunk, const ToDomainClock& clock, std::vector<Span>& out,
           std::vector<MessageSpanInfo>& info);
  // A receive half flagged as mirrored (its bytes not copied: this agent copies the sender's, on
  // this host; half.domain set; `first`: the kernel's mark of its socket's first such call): the
  // messages whose last byte it read, from the sender's parse, are paired as if its chunk had
  // been parsed (now, or once the sender's chunks and any call before it come).
  void add_mirrored_receive(const Half& half, bool first, const ToDomainClock& clock, std::vector<Span>& out,
                            std::vector<MessageSpanInfo>& info);
  // Ages pending halves and idle streams at true time now_ns (CLOCK_MONOTONIC). Chunks a stream
  // held past their bound go on first: spans they complete are appended as by add().
  void expire(std::int64_t now_ns, const ToDomainClock& clock, std::vector<Span>& out,
              std::vector<MessageSpanInfo>& info);

  MessagePairingCounters counters() const;

  // The exchange (--exchange): every produced batch half is also handed out (consumers elsewhere
  // may read the batch), and a fetched half that finds no produced half here within
  // exchange_fetch_grace_ns is handed out and forgotten here. Each fetch is thus paired once: here
  // when its producer is here, else by the exchange's owner of the batch's topic-partition.
  void ship_kafka_halves(bool on);
  // The exchange (--exchange): each ZMTP message half is first offered to `divert`, as a Half of
  // transport zmtp (its flow, the sequence number of the message's first byte, its size on the
  // wire, the stamps the local pairing would use); a half it takes (the other end of its flow is
  // another host's) is paired by the exchange's owner of that host pair, keyed like a TCP half,
  // and not here. Unset: every ZMTP half is paired here.
  using DivertZmtp = std::function<bool(const Half&)>;
  void divert_zmtp_halves(DivertZmtp divert);
  // The halves handed out since the last call (bounded by what one add() produces per call).
  void take_shipped(std::vector<ShippedKafkaHalf>& out);
  std::size_t pending() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace skewscope
