// ConnectionTracker's reading of Kafka requests and responses: a request teaches the correlation
// id -> (api key, version) that its response is read with; a Produce request holds the produced
// batches until its response gives their offsets; a Fetch response holds fetched batches. Its own
// file because this is the per-API layer, between the framing (kafka_connection.cpp) and the
// record batches (kafka_record_batches.cpp).
#include <algorithm>
#include <string>
#include <utility>

#include "protocols/kafka/kafka_connection_state.hpp"

namespace skewscope::protocols::kafka {
namespace {

using wire::Reader;

constexpr std::int16_t kProduce = 0;
constexpr std::int16_t kFetch = 1;
// Versions parsed here: record batches (magic 2) need Produce v3 / Fetch v4; Fetch v13 names
// topics by id only. Flexible (compact lengths, tagged fields) from Produce v9 / Fetch v12.
constexpr std::int16_t kProduceMin = 3, kProduceMax = 10, kProduceFlexible = 9;
constexpr std::int16_t kFetchMin = 4, kFetchMax = 12, kFetchFlexible = 12;

bool request_flexible_header(std::int16_t key, std::int16_t version) {
  return (key == kProduce && version >= kProduceFlexible) || (key == kFetch && version >= kFetchFlexible);
}

// The "topics[] { name, partitions[] { ... } }" layout that Produce requests, Produce responses and
// Fetch responses share: walks both arrays (and their tagged fields when flexible), calling
// `partition(topic)` with r at each partition's first field; the callback reads that partition's
// fields, its trailing tags excepted. A failed read ends the walk (the Reader's error sticks).
template <typename PerPartition>
void for_each_topic_partition(Reader& r, bool flex, PerPartition&& partition) {
  const std::int64_t topics = r.length(flex);
  for (std::int64_t t = 0; r.ok() && t < topics; ++t) {
    const std::int64_t name_len = r.length(flex, true);
    std::string topic;
    if (r.ok() && name_len > 0) {
      const auto b = r.take(static_cast<std::uint32_t>(std::min<std::int64_t>(name_len, 1 << 30)));
      topic.assign(b.begin(), b.end());
    }
    const std::int64_t partitions = r.length(flex);
    for (std::int64_t p = 0; r.ok() && p < partitions; ++p) {
      partition(topic);
      if (flex) r.skip_tags();
    }
    if (flex) r.skip_tags();
  }
}

}  // namespace

void ConnectionTracker::State::structure_lost(const Reader& r) {
  if (r.error() == Reader::Error::kInvalid) {
    ++counters.invalid;
  } else {
    ++counters.messages_unparsed;
  }
}

void ConnectionTracker::State::on_request(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total,
                                          std::vector<BatchHalf>& out) {
  Reader r(m, 4, total);
  PendingRequest req;
  req.api_key = r.i16();
  req.api_version = r.i16();
  req.correlation_id = r.i32();
  if (!r.ok()) return structure_lost(r);
  ++counters.requests;
  have_last_correlation = true;
  last_correlation = req.correlation_id;
  bool acks0 = false;
  if (req.api_key == kProduce) {
    ++counters.produce_requests;
    if (req.api_version < kProduceMin || req.api_version > kProduceMax) {
      ++counters.unsupported_versions;
    } else {
      r.skip_string(false);  // client_id: int16 length even in flexible headers
      if (request_flexible_header(req.api_key, req.api_version)) r.skip_tags();
      parse_produce_request(r, m, msg_seq, req, acks0);
    }
  }
  if (acks0) {  // no response will come
    emit_produced(req, out);
    return;
  }
  if (pending.size() >= options.max_pending_requests) {
    PendingRequest& oldest = pending.front();
    emit_produced(oldest, out);
    pending.pop_front();
  }
  pending.push_back(std::move(req));
}

void ConnectionTracker::State::parse_produce_request(Reader& r, const SparseMessage& m, std::uint32_t msg_seq,
                                                     PendingRequest& req, bool& acks0) {
  const bool flex = req.api_version >= kProduceFlexible;
  r.skip_string(flex);  // transactional_id
  const std::int16_t acks = r.i16();
  r.i32();  // timeout
  if (!r.ok()) return structure_lost(r);
  acks0 = acks == 0;
  for_each_topic_partition(r, flex, [&](const std::string& topic) {
    const std::int32_t partition = r.i32();
    records_field(r, flex, m, msg_seq, BatchHalf::Side::kProduced, topic, partition, req.correlation_id, req.produced);
  });
  if (!r.ok()) structure_lost(r);
}

void ConnectionTracker::State::on_response(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total,
                                           std::vector<BatchHalf>& out) {
  Reader r(m, 4, total);
  const std::int32_t corr = r.i32();
  if (!r.ok()) return structure_lost(r);
  auto it =
      std::find_if(pending.begin(), pending.end(), [&](const PendingRequest& p) { return p.correlation_id == corr; });
  if (it == pending.end()) {
    ++counters.responses_unmatched;
    return;
  }
  // Responses come in request order: requests before this one will get none.
  for (auto skipped = pending.begin(); skipped != it; ++skipped) emit_produced(*skipped, out);
  PendingRequest req = std::move(*it);
  pending.erase(pending.begin(), it + 1);
  ++counters.responses;
  if (request_flexible_header(req.api_key, req.api_version)) r.skip_tags();
  if (req.api_key == kFetch) {
    ++counters.fetch_responses;
    if (req.api_version < kFetchMin || req.api_version > kFetchMax) {
      ++counters.unsupported_versions;
    } else {
      parse_fetch_response(r, m, msg_seq, req, out);
    }
  } else if (req.api_key == kProduce && !req.produced.empty()) {
    parse_produce_response(r, req);
  }
  emit_produced(req, out);
}

void ConnectionTracker::State::parse_fetch_response(Reader& r, const SparseMessage& m, std::uint32_t msg_seq,
                                                    const PendingRequest& req, std::vector<BatchHalf>& out) {
  const std::int16_t v = req.api_version;
  const bool flex = v >= kFetchFlexible;
  r.i32();  // throttle_time_ms
  if (v >= 7) {
    r.i16();  // error_code
    r.i32();  // session_id
  }
  std::vector<PendingBatch> batches;
  for_each_topic_partition(r, flex, [&](const std::string& topic) {
    const std::int32_t partition = r.i32();
    r.i16();              // error_code
    r.i64();              // high_watermark
    r.i64();              // last_stable_offset
    if (v >= 5) r.i64();  // log_start_offset
    const std::int64_t aborted = r.length(flex);
    if (flex) {
      for (std::int64_t a = 0; r.ok() && a < aborted; ++a) {
        r.skip(16);
        r.skip_tags();
      }
    } else if (aborted > 0) {
      r.skip(16ull * static_cast<std::uint64_t>(aborted));  // producer_id, first_offset
    }
    if (v >= 11) r.i32();  // preferred_read_replica
    records_field(r, flex, m, msg_seq, BatchHalf::Side::kFetched, topic, partition, req.correlation_id, batches);
  });
  if (!r.ok()) structure_lost(r);
  for (auto& b : batches) {
    ++counters.batches_fetched;
    counters.batches_crc_checked += b.half.crc_checked;
    out.push_back(std::move(b.half));
  }
}

void ConnectionTracker::State::parse_produce_response(Reader& r, PendingRequest& req) {
  const bool flex = req.api_version >= kProduceFlexible;
  const std::int16_t v = req.api_version;
  for_each_topic_partition(r, flex, [&](const std::string& topic) {
    const std::int32_t partition = r.i32();
    const std::int16_t error = r.i16();
    std::int64_t offset = r.i64();
    const std::int64_t log_append_time = r.i64();  // v2+
    if (v >= 5) r.i64();                           // log_start_offset
    if (v >= 8) {
      const std::int64_t errors = r.length(flex);
      for (std::int64_t e = 0; r.ok() && e < errors; ++e) {
        r.i32();
        r.skip_string(flex);
        if (flex) r.skip_tags();
      }
      r.skip_string(flex);  // error_message
    }
    if (!r.ok() || error != 0 || offset < 0) return;
    for (auto& b : req.produced) {
      if (b.half.topic != topic || b.half.partition != partition || b.half.base_offset) continue;
      b.half.base_offset = offset;
      if (log_append_time >= 0) b.half.log_append_time_ms = log_append_time;
      offset += static_cast<std::int64_t>(b.last_offset_delta) + 1;
    }
  });
  if (!r.ok()) structure_lost(r);
}

void ConnectionTracker::State::emit_produced(PendingRequest& req, std::vector<BatchHalf>& out) {
  for (auto& b : req.produced) {
    ++counters.batches_produced;
    counters.batches_crc_checked += b.half.crc_checked;
    if (!b.half.base_offset) ++counters.produce_without_response;
    out.push_back(std::move(b.half));
  }
  req.produced.clear();
}

}  // namespace skewscope::protocols::kafka
