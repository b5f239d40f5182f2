// Kafka batch halves on the owner of their topic-partition (RemotePairing), and the matcher rule
// that decides which fetches leave an agent (KafkaBatchMatcher with wait = false).
#include <doctest/doctest.h>

#include "core/agent_report.hpp"
#include "correlate/kafka_batch_matcher.hpp"
#include "exchange/remote_pairing.hpp"
#include "remote_report.hpp"

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kRealtimeMinusMono = 1'790'000'000 * kSecond;

WireMessageHalf half(WireMessageHalf::Kind kind, std::int32_t base_sequence, std::int64_t realtime_ns,
                     std::uint16_t consumer_port = 0) {
  WireMessageHalf h;
  h.kind = kind;
  h.topic = "orders";
  h.partition = 0;
  h.producer_id = 9;
  h.producer_epoch = 0;
  h.base_sequence = base_sequence;
  h.records = 10;
  h.bytes = 300;
  h.base_offset = base_sequence;
  h.realtime_ns = realtime_ns;
  if (kind == WireMessageHalf::Kind::fetched) h.consumer = FlowKey{v4(2), v4(3), consumer_port, 9092};
  return h;
}

struct Fixture {
  DomainRegistry domains{"owner", true};
  RemotePairing pairing{CorrelatorLimits{}, 5 * kSecond, estimate::Config{}};

  // Batch `seq` produced on host p at true time t (monotonic), fetched 2 ms later on host c,
  // whose clock reads `skew` off; the consumer's half may arrive first.
  void batch(std::int32_t seq, std::int64_t t, std::int64_t skew, std::int64_t now, bool fetch_first = false,
             std::uint16_t consumer_port = 40000) {
    WireBatch p{"host-p", {"producer"}, 0, 0, 0, {}, {}};
    p.messages.push_back(half(WireMessageHalf::Kind::produced, seq, t + kRealtimeMinusMono));
    WireBatch c{"host-c", {"consumer"}, 0, 0, 0, {}, {}};
    c.messages.push_back(
        half(WireMessageHalf::Kind::fetched, seq, t + 2'000'000 + skew + kRealtimeMinusMono, consumer_port));
    if (fetch_first) pairing.ingest(0, c, now, kRealtimeMinusMono, domains);
    pairing.ingest(0, p, now, kRealtimeMinusMono, domains);
    if (!fetch_first) pairing.ingest(0, c, now, kRealtimeMinusMono, domains);
  }
  const PairReport* kafka_pair(const AgentReport& r) {
    for (const auto& p : r.health.pairs)
      if (p.key.transport == Transport::kafka) return &p;
    return nullptr;
  }
  AgentReport report(std::int64_t now) { return test::remote_report(pairing, domains, now); }
  ExchangeReport exchange() const {
    ExchangeReport x;
    pairing.fill(x);
    return x;
  }
};

}  // namespace

TEST_CASE("the owner pairs a batch's produced and fetched halves from two hosts, in either order") {
  Fixture f;
  const std::int64_t now = 100 * kSecond;
  f.pairing.assign({0}, now);
  f.batch(1, now - kSecond, 0, now);
  f.batch(2, now - kSecond, 0, now, /*fetch_first=*/true);
  std::vector<Span> spans;
  std::vector<MessageSpanInfo> info;
  f.pairing.take_message_spans(spans, info);
  REQUIRE(spans.size() == 2);
  REQUIRE(info.size() == 2);
  CHECK(info[0].topic == "orders");
  CHECK(info[0].records == 10);
  for (const auto& i : info) {  // the consumer's socket to the broker, for the OTLP server.address
    CHECK(i.consumer_socket.dst_port == 9092);
    CHECK(i.consumer_socket.src_port == 40000);
  }
  for (const Span& s : spans) {
    CHECK((s.transport == Transport::kafka));
    CHECK(s.recv_ns - s.send_ns == 2'000'000);
    CHECK(f.domains.name(s.src) == "producer");
    CHECK(f.domains.name(s.dst) == "consumer");
  }
  const AgentReport r = f.report(now);
  const PairReport* pair = f.kafka_pair(r);
  REQUIRE(pair);
  CHECK(pair->spans == 2);
  CHECK(pair->negative_spans == 0);
  const ExchangeReport x = f.exchange();
  CHECK(x.kafka_batches.pairs == 2);
  CHECK(x.kafka_batches.paired_records == 20);
  CHECK(x.halves_consumed == 4);
}

TEST_CASE("a batch read by two consumers pairs once per consumer; a re-fetch does not pair again") {
  Fixture f;
  const std::int64_t now = 100 * kSecond;
  f.pairing.assign({0}, now);
  f.batch(1, now - kSecond, 0, now, false, 40000);
  WireBatch again{"host-c", {"consumer"}, 0, 0, 0, {}, {}};
  again.messages.push_back(half(WireMessageHalf::Kind::fetched, 1, now + kRealtimeMinusMono, 40000));  // re-fetch
  again.messages.push_back(half(WireMessageHalf::Kind::fetched, 1, now + kRealtimeMinusMono, 40001));  // 2nd consumer
  f.pairing.ingest(0, again, now, kRealtimeMinusMono, f.domains);
  const ExchangeReport x = f.exchange();
  CHECK(x.kafka_batches.pairs == 2);
  CHECK(x.kafka_batches.duplicates == 1);
}

TEST_CASE("a consumer clock 1 s behind makes the owner's kafka spans negative and health 0") {
  Fixture f;
  const std::int64_t now = 100 * kSecond;
  f.pairing.assign({0}, now - 10 * kSecond);  // owned for longer than a window: certain
  for (int i = 0; i < 20; ++i) f.batch(i, now - 100'000'000 + i * 1'000'000, -kSecond, now);
  const AgentReport r = f.report(now);
  const PairReport* pair = f.kafka_pair(r);
  REQUIRE(pair);
  CHECK(pair->spans == 20);
  CHECK(pair->negative_spans == 20);
  INFO("window spans " << pair->window.spans << " negative " << pair->window.negative_spans);
  CHECK(pair->health == 0);
  CHECK(r.health.health == 0);
}

TEST_CASE("unpaired halves age out counted, and a revoke counts what waited") {
  Fixture f;
  const std::int64_t now = 100 * kSecond;
  f.pairing.assign({0, 1}, now);
  WireBatch p{"host-p", {"producer"}, 0, 0, 0, {}, {}};
  p.messages.push_back(half(WireMessageHalf::Kind::produced, 5, now + kRealtimeMinusMono));
  WireBatch c{"host-c", {"consumer"}, 0, 0, 0, {}, {}};
  c.messages.push_back(half(WireMessageHalf::Kind::fetched, 6, now + kRealtimeMinusMono, 40000));
  f.pairing.ingest(0, p, now, kRealtimeMinusMono, f.domains);
  f.pairing.ingest(0, c, now, kRealtimeMinusMono, f.domains);
  f.pairing.ingest(1, c, now, kRealtimeMinusMono, f.domains);
  f.pairing.tick(now + 11 * kSecond, false);  // beyond send_max_age (10 s)
  ExchangeReport x = f.exchange();
  CHECK(x.kafka_batches.unpaired_produced == 1);
  CHECK(x.kafka_batches.unpaired_fetched == 2);
  f.pairing.ingest(1, c, now + 12 * kSecond, kRealtimeMinusMono, f.domains);
  f.pairing.revoke({1});
  CHECK(f.pairing.drops(DropReason::partition_revoked) == 1);
  x = f.exchange();
  CHECK(x.kafka_batches.fetched == 3);  // the revoked partition's counters stay in the totals
}

TEST_CASE("a fetch that finds no local producer is left to the exchange, one that finds it pairs here") {
  KafkaBatchMatcher m;
  std::vector<Span> out;
  std::vector<MessageSpanInfo> info;
  auto batch = [](protocols::kafka::BatchHalf::Side side, std::int32_t seq) {
    protocols::kafka::BatchHalf b;
    b.side = side;
    b.topic = "orders";
    b.partition = 0;
    b.producer_id = 1;
    b.producer_epoch = 0;
    b.base_sequence = seq;
    b.record_count = 3;
    b.base_offset = seq;
    return b;
  };
  using Side = protocols::kafka::BatchHalf::Side;
  const KafkaConsumerId consumer{1, FlowKey{v4(2), v4(3), 40000, 9092}};
  CHECK((m.fetched(batch(Side::kFetched, 1), {1, 5, 5, 10}, consumer, false, true, out, info) ==
         KafkaBatchMatcher::Fetch::not_found));
  CHECK(m.pending() == 0);  // nothing kept: it is paired elsewhere, not here too
  m.produced(batch(Side::kProduced, 2), {0, 1, 1, 10}, true, out, info);
  CHECK((m.fetched(batch(Side::kFetched, 2), {1, 5, 5, 10}, consumer, false, true, out, info) ==
         KafkaBatchMatcher::Fetch::paired));
  CHECK(out.size() == 1);
  CHECK(m.counters().paired_records == 3);
  // A fetch that waits its grace and is then handed back for the exchange: not counted unpaired,
  // and a produced half arriving later finds nothing to pair here (it pairs at the owner).
  CHECK((m.fetched(batch(Side::kFetched, 3), {1, 5, 5, 10}, consumer, true, true, out, info) ==
         KafkaBatchMatcher::Fetch::waiting));
  std::vector<WaitingFetch> overdue;
  m.take_fetched_before(5, overdue);
  CHECK(overdue.empty());
  m.take_fetched_before(6, overdue);
  REQUIRE(overdue.size() == 1);
  CHECK(overdue[0].batch.base_sequence == 3);
  CHECK(overdue[0].consumer == consumer);
  m.produced(batch(Side::kProduced, 3), {0, 7, 7, 10}, true, out, info);
  CHECK(out.size() == 1);
  m.expire(100);
  CHECK(m.counters().unpaired_fetched == 0);
}

TEST_CASE("a batch produced twice keeps its earliest send in one domain, and only until it pairs") {
  KafkaBatchMatcher m;
  std::vector<Span> out;
  std::vector<MessageSpanInfo> info;
  protocols::kafka::BatchHalf b;
  b.topic = "orders";
  b.producer_id = 1;
  b.base_sequence = 4;
  b.record_count = 2;
  b.base_offset = 4;
  const KafkaConsumerId consumer{2, FlowKey{v4(2), v4(3), 40000, 9092}};
  // The relay nearest the broker is decoded first (its response came first), the stage's own
  // earlier send second: the span starts at the stage's send.
  b.side = protocols::kafka::BatchHalf::Side::kProduced;
  m.produced(b, {0, 30, 30, 10}, true, out, info);
  m.produced(b, {0, 10, 10, 10}, true, out, info);
  // An earlier send in another domain is another clock: not comparable, the kept send stays.
  m.produced(b, {1, 5, 5, 10}, true, out, info);
  CHECK(m.counters().duplicates == 2);
  b.side = protocols::kafka::BatchHalf::Side::kFetched;
  CHECK((m.fetched(b, {2, 50, 50, 10}, consumer, true, true, out, info) == KafkaBatchMatcher::Fetch::paired));
  REQUIRE(out.size() == 1);
  CHECK(out[0].send_ns == 10);
  // Once a consumer paired, a later, earlier-looking send changes nothing already reported.
  b.side = protocols::kafka::BatchHalf::Side::kProduced;
  m.produced(b, {0, 1, 1, 10}, true, out, info);
  b.side = protocols::kafka::BatchHalf::Side::kFetched;
  const KafkaConsumerId second{2, FlowKey{v4(2), v4(3), 40001, 9092}};
  CHECK((m.fetched(b, {2, 60, 60, 10}, second, true, true, out, info) == KafkaBatchMatcher::Fetch::paired));
  REQUIRE(out.size() == 2);
  CHECK(out[1].send_ns == 10);
}

}  // namespace skewscope::exchange
