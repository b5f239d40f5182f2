// Kafka shapes librdkafka 2.0 does not send but brokers and other clients do: several topics and
// partitions in one Produce request, and the flexible versions (compact lengths, tagged fields) of
// Produce (v9) and Fetch (v12). The record batches inside are the real ones captured from
// librdkafka (tests/data/protocols); only the request/response framing around them is encoded here.
#include <doctest/doctest.h>

#include "capture_file.hpp"
#include "protocols/kafka/kafka_connection.hpp"

namespace {

using namespace skewscope::protocols;
using namespace skewscope::protocols::testing;
using kafka::BatchHalf;
using kafka::ConnectionTracker;
using kafka::Direction;

const std::string kData = SKEWSCOPE_PROTOCOL_DATA;

struct Encoder {
  explicit Encoder(bool flexible_version) : flexible(flexible_version) {}
  bool flexible;
  std::vector<std::uint8_t> b;
  void be(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void uvarint(std::uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<std::uint8_t>(v));
  }
  void count(std::size_t n) { flexible ? uvarint(n + 1) : be(n, 4); }
  void null_count() { flexible ? uvarint(0) : be(0xFFFFFFFFu, 4); }
  void string(const std::string& s) {
    flexible ? uvarint(s.size() + 1) : be(s.size(), 2);
    b.insert(b.end(), s.begin(), s.end());
  }
  void null_string() { flexible ? uvarint(0) : be(0xFFFF, 2); }
  void bytes(const std::vector<std::uint8_t>& v) {
    flexible ? uvarint(v.size() + 1) : be(v.size(), 4);
    b.insert(b.end(), v.begin(), v.end());
  }
  // An empty tagged-field section, or one unknown tag (flexible versions may add any).
  void tags(bool one_unknown = false) {
    if (!flexible) return;
    if (!one_unknown) return uvarint(0);
    uvarint(1);
    uvarint(7);
    uvarint(3);
    b.insert(b.end(), {1, 2, 3});
  }
  std::vector<std::uint8_t> framed() const {
    std::vector<std::uint8_t> out;
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(b.size() >> (8 * i)));
    out.insert(out.end(), b.begin(), b.end());
    return out;
  }
};

void request_header(Encoder& e, int api_key, int version, int corr) {
  e.be(static_cast<std::uint64_t>(api_key), 2);
  e.be(static_cast<std::uint64_t>(version), 2);
  e.be(static_cast<std::uint64_t>(corr), 4);
  e.be(4, 2);  // client_id: a classic string even in flexible headers
  e.b.insert(e.b.end(), {'t', 'e', 's', 't'});
  e.tags();
}

// Real batches: the producer's batches cut out of the idempotent and lz4 captures.
struct RealBatch {
  BatchHalf half;
  std::vector<std::uint8_t> bytes;
};

std::vector<RealBatch> real_batches(const std::string& prefix) {
  const auto files = captures(kData, prefix);
  REQUIRE(files.size() == 1);
  const auto records = load_capture(files[0]);
  std::vector<std::uint8_t> sent;
  for (const auto& r : records)
    if (r.direction == 0) sent.insert(sent.end(), r.bytes.begin(), r.bytes.end());
  ConnectionTracker t;
  std::vector<BatchHalf> halves;
  for (const auto& c : to_chunks(records))
    t.feed(c.direction == 0 ? Direction::kToBroker : Direction::kFromBroker, c.chunk, halves);
  std::vector<RealBatch> out;
  for (const auto& h : halves) {
    const std::uint32_t at = h.seq - kFirstSeq;
    out.push_back({h, {sent.begin() + at, sent.begin() + at + h.batch_bytes}});
  }
  REQUIRE(out.size() >= 2);
  return out;
}

struct Exchange {
  std::vector<std::vector<std::uint8_t>> to_broker, from_broker;
};

// One Produce request with two topics of two partitions each, and its response.
Exchange produce(int version, const std::vector<RealBatch>& a, const std::vector<RealBatch>& b) {
  Encoder req{version >= 9};
  request_header(req, 0, version, 41);
  req.null_string();  // transactional_id
  req.be(0xFFFF, 2);  // acks = -1
  req.be(1000, 4);
  req.count(2);
  for (const auto* batches : {&a, &b}) {
    req.string("t." + std::to_string(batches == &a ? 1 : 2));
    req.count(2);
    for (int p = 0; p < 2; ++p) {
      req.be(static_cast<std::uint64_t>(p + 5), 4);
      req.bytes((*batches)[static_cast<std::size_t>(p)].bytes);
      req.tags(p == 1);
    }
    req.tags();
  }
  req.tags();
  Encoder resp{version >= 9};
  resp.be(41, 4);
  resp.tags();  // response header v1 in flexible versions
  resp.count(2);
  for (int t = 1; t <= 2; ++t) {
    resp.string("t." + std::to_string(t));
    resp.count(2);
    for (int p = 0; p < 2; ++p) {
      resp.be(static_cast<std::uint64_t>(p + 5), 4);
      resp.be(0, 2);                                         // error_code
      resp.be(static_cast<std::uint64_t>(1000 * t + p), 8);  // base_offset
      resp.be(~0ull, 8);                                     // log_append_time_ms = -1
      if (version >= 5) resp.be(0, 8);                       // log_start_offset
      if (version >= 8) {
        resp.count(0);  // record_errors
        resp.null_string();
      }
      resp.tags();
    }
    resp.tags();
  }
  resp.be(0, 4);  // throttle_time_ms
  resp.tags();
  return {{req.framed()}, {resp.framed()}};
}

Exchange fetch(int version, const std::vector<RealBatch>& a) {
  Encoder req{version >= 12};
  request_header(req, 1, version, 77);
  req.be(0xFFFFFFFFu, 4);  // the body is not parsed: any bytes
  Encoder resp{version >= 12};
  resp.be(77, 4);
  resp.tags();
  resp.be(0, 4);  // throttle
  resp.be(0, 2);  // error_code
  resp.be(9, 4);  // session_id
  resp.count(1);
  resp.string("t.f");
  resp.count(2);
  for (int p = 0; p < 2; ++p) {
    resp.be(static_cast<std::uint64_t>(p), 4);
    resp.be(0, 2);
    resp.be(100, 8);  // high_watermark
    resp.be(100, 8);  // last_stable_offset
    resp.be(0, 8);    // log_start_offset
    if (p == 0) {
      resp.null_count();  // aborted_transactions
    } else {
      resp.count(1);
      resp.be(7, 8);
      resp.be(3, 8);
      resp.tags();
    }
    resp.be(0xFFFFFFFFu, 4);  // preferred_read_replica
    resp.bytes(a[static_cast<std::size_t>(p)].bytes);
    resp.tags(true);
  }
  resp.tags();
  resp.tags();
  return {{req.framed()}, {resp.framed()}};
}

// Feeds each message in pieces of `piece` bytes (0 = whole), requests first.
std::vector<BatchHalf> run(const Exchange& x, std::uint32_t piece, ConnectionTracker& t) {
  std::vector<BatchHalf> out;
  std::uint32_t seq[2] = {kFirstSeq, kFirstSeq};
  std::uint64_t ts = 0;
  std::uint64_t pieces = 0;
  for (int d = 0; d < 2; ++d) {
    for (const auto& m : d == 0 ? x.to_broker : x.from_broker) {
      ++ts;  // each message later than the one before
      const std::uint32_t step = piece ? piece : static_cast<std::uint32_t>(m.size());
      for (std::uint32_t off = 0; off < m.size(); off += step) {
        const auto len = std::min<std::uint32_t>(step, static_cast<std::uint32_t>(m.size()) - off);
        t.feed(d == 0 ? Direction::kToBroker : Direction::kFromBroker,
               {ts, seq[d], len, std::span<const std::uint8_t>(m.data() + off, len)}, out);
        // A new timestamp every 16 pieces: within the tracker's bound on chunk marks per message.
        if (++pieces % 16 == 0) ++ts;
        seq[d] += len;
      }
    }
  }
  t.flush(out);
  return out;
}

}  // namespace

TEST_CASE("kafka: Produce with several topics and partitions, classic v7 and flexible v9") {
  const auto a = real_batches("kafka-produce-idempotent");
  const auto b = real_batches("kafka-produce-lz4");
  for (int version : {3, 7, 8, 9}) {
    for (std::uint32_t piece : {0u, 1u, 13u}) {
      CAPTURE(version);
      CAPTURE(piece);
      ConnectionTracker t;
      const auto halves = run(produce(version, a, b), piece, t);
      REQUIRE(halves.size() == 4);
      CHECK(t.counters().invalid + t.counters().messages_unparsed + t.counters().unsupported_versions == 0);
      for (std::size_t i = 0; i < 4; ++i) {
        const int topic = static_cast<int>(i / 2) + 1;
        const int p = static_cast<int>(i % 2);
        const auto& src = (topic == 1 ? a : b)[static_cast<std::size_t>(p)].half;
        CHECK(halves[i].topic == "t." + std::to_string(topic));
        CHECK(halves[i].partition == p + 5);
        CHECK(halves[i].crc == src.crc);
        CHECK(halves[i].crc_checked);
        CHECK(halves[i].record_count == src.record_count);
        CHECK(halves[i].producer_id == src.producer_id);
        CHECK(halves[i].base_offset == 1000 * topic + p);
        CHECK(halves[i].correlation_id == 41);
        CHECK(!halves[i].log_append_time_ms);
      }
    }
  }
}

TEST_CASE("kafka: Fetch classic v11 and flexible v12, aborted transactions and unknown tags") {
  const auto a = real_batches("kafka-produce-lz4");
  for (int version : {11, 12}) {
    for (std::uint32_t piece : {0u, 1u, 29u}) {
      CAPTURE(version);
      CAPTURE(piece);
      ConnectionTracker t;
      const auto halves = run(fetch(version, a), piece, t);
      REQUIRE(halves.size() == 2);
      CHECK(t.counters().invalid + t.counters().messages_unparsed == 0);
      for (int p = 0; p < 2; ++p) {
        const auto& h = halves[static_cast<std::size_t>(p)];
        CHECK(h.side == BatchHalf::Side::kFetched);
        CHECK(h.topic == "t.f");
        CHECK(h.partition == p);
        CHECK(h.crc == a[static_cast<std::size_t>(p)].half.crc);
        CHECK(h.crc_checked);
        CHECK(h.ts_ns > 1);  // from the response (ts 2 on), not the request (ts 1)
      }
      // Byte by byte, the second batch ends in a later piece than the first: its own timestamp.
      if (piece == 1) CHECK(halves[1].ts_ns > halves[0].ts_ns);
    }
  }
}

TEST_CASE("kafka: versions this parser does not know are counted, not guessed") {
  const auto a = real_batches("kafka-produce-lz4");
  ConnectionTracker t;
  const auto halves = run(fetch(13, a), 0, t);  // v13 names topics by id only
  CHECK(halves.empty());
  CHECK(t.counters().unsupported_versions == 1);
}
