// Kafka connection tracker over real librdkafka bytes (tests/data/protocols): every produced and
// fetched batch named with the record counts the clients reported, the two halves of each batch
// meeting under one key, the same result however the stream is split, truncated prefixes that
// never invent a batch and count what they could not name, and invalid input.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "capture_file.hpp"
#include "protocols/kafka/kafka_connection.hpp"
#include "protocols/kafka/kafka_wire.hpp"

namespace {

using namespace skewscope::protocols;
using namespace skewscope::protocols::testing;
using kafka::BatchHalf;
using kafka::ConnectionTracker;
using kafka::Direction;

const std::string kData = SKEWSCOPE_PROTOCOL_DATA;

struct Produced {
  int partitions = 0;
  long messages = 0;
  bool idempotent = false;
  std::string compression;
  std::string acks;
};

struct Manifest {
  std::map<std::string, Produced> topics;
  long consumed = 0;
};

Manifest manifest() {
  Manifest m;
  std::ifstream in(kData + "/kafka-manifest.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string what;
    s >> what;
    if (what == "produce") {
      std::string topic;
      Produced p;
      s >> topic >> p.partitions >> p.messages >> p.idempotent >> p.compression >> p.acks;
      m.topics[topic] = p;
    } else if (what == "consume") {
      s >> m.consumed;
    }
  }
  REQUIRE(m.topics.size() == 3);
  return m;
}

struct Run {
  ConnectionTracker tracker;
  std::vector<BatchHalf> halves;
};

Run run(const std::vector<Chunk>& chunks) {
  Run r;
  for (const auto& c : chunks)
    r.tracker.feed(c.direction == 0 ? Direction::kToBroker : Direction::kFromBroker, c.chunk, r.halves);
  r.tracker.flush(r.halves);
  return r;
}

std::vector<Record> capture(const std::string& prefix) {
  const auto files = captures(kData, prefix);
  REQUIRE(files.size() == 1);
  return load_capture(files[0]);
}

// The consumer's capture with the Fetch responses (the other is its coordinator connection).
std::vector<Record> fetch_capture() {
  std::vector<Record> biggest;
  for (const auto& f : captures(kData, "kafka-consume")) {
    auto r = load_capture(f);
    if (r.size() > biggest.size()) biggest = std::move(r);
  }
  return biggest;
}

bool same(const BatchHalf& a, const BatchHalf& b) {
  return a.side == b.side && a.topic == b.topic && a.partition == b.partition && a.producer_id == b.producer_id &&
         a.producer_epoch == b.producer_epoch && a.base_sequence == b.base_sequence && a.crc == b.crc &&
         a.record_count == b.record_count && a.attributes == b.attributes && a.base_offset == b.base_offset &&
         a.ts_ns == b.ts_ns && a.seq == b.seq && a.batch_bytes == b.batch_bytes && a.correlation_id == b.correlation_id;
}

// Named under truncation: a batch of the full parse (base offset may be unknown, CRC unchecked).
bool named_like(const BatchHalf& cut, const BatchHalf& full) {
  BatchHalf c = cut;
  if (!c.base_offset) c.base_offset = full.base_offset;
  return same(c, full);
}

std::map<std::string, long> records_per_topic(const std::vector<BatchHalf>& hs) {
  std::map<std::string, long> n;
  for (const auto& h : hs) n[h.topic] += h.record_count;
  return n;
}

const char* kProduceCaptures[] = {"kafka-produce-idempotent", "kafka-produce-lz4", "kafka-produce-acks1"};

}  // namespace

TEST_CASE("kafka: producers' captures name every batch with the records the producer sent") {
  const Manifest m = manifest();
  for (const char* name : kProduceCaptures) {
    CAPTURE(name);
    const std::string topic = std::string("rec.") + (name + std::string("kafka-produce-").size());
    const Produced& p = m.topics.at(topic);
    const Run r = run(to_chunks(capture(name)));
    const auto& c = r.tracker.counters();
    CHECK(records_per_topic(r.halves)[topic] == p.messages);
    CHECK(c.batches_produced == r.halves.size());
    CHECK(c.batches_fetched == 0);
    CHECK(c.batches_crc_checked == r.halves.size());
    CHECK(c.produce_requests > 0);
    CHECK(c.requests == c.responses);  // every request answered (acks != 0)
    CHECK(c.invalid + c.messages_unparsed + c.sync_losses + c.batches_unnamed + c.regions_unnamed == 0);
    CHECK(c.produce_without_response == 0);
    CHECK(c.unsupported_versions == 0);
    std::set<int> partitions;
    std::map<int, std::int64_t> next_offset;
    for (const auto& h : r.halves) {
      CHECK(h.side == BatchHalf::Side::kProduced);
      CHECK(h.topic == topic);
      CHECK(h.crc_checked);
      REQUIRE(h.base_offset.has_value());
      // Offsets the broker assigned are consecutive per partition, in the order of the batches.
      if (next_offset.count(h.partition)) CHECK(*h.base_offset == next_offset[h.partition]);
      next_offset[h.partition] = *h.base_offset + h.record_count;
      partitions.insert(h.partition);
      CHECK((h.producer_id >= 0) == p.idempotent);
      CHECK(h.compression() == (p.compression == "lz4" ? 3 : 0));
      CHECK(h.ts_ns > 0);
    }
    CHECK(partitions.size() == static_cast<std::size_t>(p.partitions));

    if (p.idempotent) {  // base sequences continue per partition
      std::map<int, std::int32_t> next_seq;
      for (const auto& h : r.halves) {
        CHECK(h.base_sequence == next_seq[h.partition]);
        next_seq[h.partition] = h.base_sequence + h.record_count;
      }
    }
  }
}

TEST_CASE("kafka: the consumer's fetches name every batch once, and each meets its produced half") {
  const Manifest m = manifest();
  const Run fetched = run(to_chunks(fetch_capture()));
  const auto& c = fetched.tracker.counters();
  CHECK(c.fetch_responses > 0);
  CHECK(c.invalid + c.messages_unparsed + c.sync_losses + c.batches_unnamed + c.regions_unnamed == 0);
  CHECK(c.batches_crc_checked == fetched.halves.size());
  long total = 0;
  for (const auto& [topic, n] : records_per_topic(fetched.halves)) {
    CHECK(n == m.topics.at(topic).messages);
    total += n;
  }
  CHECK(total == m.consumed);
  // One Fetch response carries several topics and partitions (librdkafka's Produce requests carry
  // one partition each; the synthetic test below covers several per request).
  std::map<std::int32_t, std::set<std::pair<std::string, int>>> per_response;
  for (const auto& h : fetched.halves) per_response[h.correlation_id].insert({h.topic, h.partition});
  std::size_t most = 0;
  for (const auto& [corr, ps] : per_response) most = std::max(most, ps.size());
  CHECK(most >= 2);

  std::vector<BatchHalf> produced;
  for (const char* name : kProduceCaptures) {
    Run r = run(to_chunks(capture(name)));
    produced.insert(produced.end(), r.halves.begin(), r.halves.end());
  }
  CHECK(produced.size() == fetched.halves.size());
  for (const auto& f : fetched.halves) {
    CHECK(f.side == BatchHalf::Side::kFetched);
    const auto key = kafka::primary_key(f);
    REQUIRE(key.has_value());
    int meets = 0;
    for (const auto& p : produced) {
      // The documented rule: produced halves indexed under their primary and offset keys.
      if (kafka::primary_key(p) != key && kafka::offset_key(p) != key) continue;
      ++meets;
      CHECK(p.record_count == f.record_count);
      CHECK(p.base_offset == f.base_offset);  // the fallback key agrees
      CHECK(kafka::offset_key(p) == kafka::offset_key(f));
      CHECK(p.ts_ns < f.ts_ns);  // one clock: sent before received
    }
    CHECK(meets == 1);
  }
}

TEST_CASE("kafka: split at every byte boundary gives the same batches as whole reads") {
  std::vector<std::vector<Record>> all;
  for (const char* name : kProduceCaptures) all.push_back(capture(name));
  all.push_back(fetch_capture());
  for (const auto& records : all) {
    const Run whole = run(to_chunks(records));
    for (std::uint32_t piece : {1u, 2u, 3u, 5u, 61u, 100u, 1000u}) {
      CAPTURE(piece);
      const Run split = run(to_chunks(records, piece));
      REQUIRE(split.halves.size() == whole.halves.size());
      for (std::size_t i = 0; i < whole.halves.size(); ++i) CHECK(same(split.halves[i], whole.halves[i]));
      CHECK(split.tracker.counters().partial_fetch_batches == whole.tracker.counters().partial_fetch_batches);
    }
  }
}

TEST_CASE("kafka: truncated prefixes never invent a batch and count what they could not name") {
  std::vector<std::vector<Record>> all;
  for (const char* name : kProduceCaptures) all.push_back(capture(name));
  all.push_back(fetch_capture());
  std::vector<std::uint32_t> caps;
  for (std::uint32_t cap = 0; cap <= 160; ++cap) caps.push_back(cap);
  for (std::uint32_t cap : {200u, 256u, 400u, 512u, 1024u, 2048u, 4095u}) caps.push_back(cap);
  for (const auto& records : all) {
    const Run whole = run(to_chunks(records));
    for (std::uint32_t cap : caps) {
      CAPTURE(cap);
      const Run cut = run(to_chunks(records, 0, cap));
      const auto& c = cut.tracker.counters();
      for (const auto& h : cut.halves) {
        bool found = false;
        for (const auto& w : whole.halves) found |= w.seq == h.seq && w.side == h.side && named_like(h, w);
        CHECK(found);
      }
      CHECK(cut.halves.size() <= whole.halves.size());
      if (cut.halves.size() < whole.halves.size())
        CHECK(c.batches_unnamed + c.regions_unnamed + c.messages_unparsed + c.sync_losses > 0);
      CHECK(c.invalid == 0);  // uncaptured is not malformed
    }
  }
}

TEST_CASE("kafka: a connection that ends early reports its produced batches without offsets") {
  const auto records = capture("kafka-produce-idempotent");
  const Run whole = run(to_chunks(records));
  // Drop the responses: the producer's batches are still named, with no base offset.
  std::vector<Record> requests;
  for (const auto& r : records)
    if (r.direction == 0) requests.push_back(r);
  const Run r = run(to_chunks(requests));
  CHECK(r.halves.size() == whole.halves.size());
  CHECK(r.tracker.counters().produce_without_response == r.halves.size());
  for (const auto& h : r.halves) CHECK(!h.base_offset);
}

TEST_CASE("kafka: invalid and unknown input is counted, never named") {
  SUBCASE("a size field beyond the bound loses sync") {
    ConnectionTracker t;
    std::vector<BatchHalf> out;
    const std::vector<std::uint8_t> junk = {0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 1};
    t.feed(Direction::kToBroker, {1, 0, 12, junk}, out);
    CHECK(t.counters().invalid == 1);
    CHECK(t.counters().sync_losses == 1);
    CHECK(out.empty());
  }
  SUBCASE("a response no request asked for") {
    ConnectionTracker t;
    std::vector<BatchHalf> out;
    const std::vector<std::uint8_t> request = {0, 0, 0, 8, 0, 18, 0, 3, 0, 0, 0, 1};  // ApiVersions
    const std::vector<std::uint8_t> answer = {0, 0, 0, 4, 0, 0, 0, 1};
    const std::vector<std::uint8_t> stray = {0, 0, 0, 4, 0, 0, 0, 9};
    SUBCASE("as the first response: the direction was first seen mid-stream") {
      t.feed(Direction::kFromBroker, {1, 0, 8, stray}, out);
      CHECK(t.counters().mid_stream_starts == 1);
      CHECK(t.counters().responses == 0);
    }
    SUBCASE("after an answered request") {
      t.feed(Direction::kToBroker, {1, 0, 12, request}, out);
      t.feed(Direction::kFromBroker, {2, 0, 8, answer}, out);
      t.feed(Direction::kFromBroker, {3, 8, 8, stray}, out);
      CHECK(t.counters().requests == 1);
      CHECK(t.counters().responses == 1);
      CHECK(t.counters().responses_unmatched == 1);
    }
  }
  SUBCASE("a corrupted batch fails its CRC and is not named") {
    auto records = capture("kafka-produce-lz4");
    const Run whole = run(to_chunks(records));
    // Flip a byte inside the first batch's records (after its 61-byte header).
    const auto first = whole.halves.front();
    std::uint32_t seq = kFirstSeq;
    for (auto& r : records) {
      if (r.direction != 0) continue;
      const std::uint32_t at = first.seq + 70 - seq;
      if (at < r.length) {
        r.bytes[at] ^= 0x5A;
        break;
      }
      seq += r.length;
    }
    const Run bad = run(to_chunks(records));
    CHECK(bad.halves.size() == whole.halves.size() - 1);
    CHECK(bad.tracker.counters().invalid == 1);
  }
  SUBCASE("a mid-stream start waits for a plausible request") {
    const auto records = capture("kafka-produce-acks1");
    Run r;
    auto chunks = to_chunks(records, 7);  // pieces that start inside requests
    chunks.erase(chunks.begin(), chunks.begin() + 3);
    for (const auto& c : chunks)
      r.tracker.feed(c.direction == 0 ? Direction::kToBroker : Direction::kFromBroker, c.chunk, r.halves);
    CHECK(r.tracker.counters().mid_stream_starts >= 1);
    CHECK(r.tracker.counters().invalid == 0);  // not parsed, so nothing malformed either
    // Requests were recognised again later: their batches, if named, are real ones.
    const Run whole = run(to_chunks(records));
    for (const auto& h : r.halves) {
      bool found = false;
      for (const auto& w : whole.halves) found |= w.seq == h.seq && w.crc == h.crc;
      CHECK(found);
    }
  }
}

TEST_CASE("kafka: connection selection by the first bytes sent") {
  for (const char* name : kProduceCaptures) {
    const auto records = capture(name);
    REQUIRE(records.front().direction == 0);
    CHECK(kafka::looks_like_request(records.front().bytes));
  }
  const std::vector<std::uint8_t> greeting = {0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 0};
  CHECK_FALSE(kafka::looks_like_request(greeting));
  const std::vector<std::uint8_t> http = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1'};
  CHECK_FALSE(kafka::looks_like_request(http));
}

TEST_CASE("kafka: CRC-32C of the standard check string") {
  const std::string check = "123456789";
  CHECK(kafka::wire::crc32c({reinterpret_cast<const std::uint8_t*>(check.data()), check.size()}) == 0xE3069283u);
  CHECK(kafka::wire::crc32c({}) == 0u);
}
