// Internal to ConnectionTracker: its State, shared by the three files that implement it, which
// split along the protocol's layers: kafka_connection.cpp frames each direction's byte stream into
// messages, kafka_messages.cpp reads the Produce and Fetch requests and responses, and
// kafka_record_batches.cpp names the record batches inside them. Not for use outside this folder.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "protocols/kafka/kafka_connection.hpp"
#include "protocols/kafka/kafka_wire.hpp"

namespace skewscope::protocols::kafka {
namespace detail {

struct PendingBatch {
  BatchHalf half;
  std::int32_t last_offset_delta = 0;
};

struct PendingRequest {
  std::int32_t correlation_id = 0;
  std::int16_t api_key = 0;
  std::int16_t api_version = 0;
  std::vector<PendingBatch> produced;  // batches of a Produce request waiting for its response
};

// One direction's position in the stream and the message being assembled.
struct DirectionState {
  bool started = false;
  bool in_sync = true;
  bool verified = false;  // the direction's first message header was checked
  std::uint32_t next_seq = 0;
  bool in_message = false;
  std::uint32_t message_seq = 0;  // sequence number of the message's first (size) byte
  std::uint32_t got = 0;          // message bytes consumed so far (size field included)
  std::uint64_t total = 0;        // 4 + size once the size is known, else 0
  std::array<std::uint8_t, 4> size_bytes{};
  wire::SparseMessage message;
};

}  // namespace detail

struct ConnectionTracker::State {
  using PendingBatch = detail::PendingBatch;
  using PendingRequest = detail::PendingRequest;
  using DirectionState = detail::DirectionState;
  using Reader = wire::Reader;
  using SparseMessage = wire::SparseMessage;

  Options options;
  Counters counters;
  DirectionState dirs[2];
  std::deque<PendingRequest> pending;
  bool have_last_correlation = false;
  std::int32_t last_correlation = 0;

  // Framing (kafka_connection.cpp).
  void feed(Direction d, const CapturedChunk& c, std::vector<BatchHalf>& out);
  bool try_resync(Direction d, const CapturedChunk& c) const;
  bool plausible_start(Direction d, std::span<const std::uint8_t> header) const;
  void lose_sync(DirectionState& s);
  void complete(Direction d, std::vector<BatchHalf>& out);
  // Requests and responses (kafka_messages.cpp).
  void on_request(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total, std::vector<BatchHalf>& out);
  void on_response(const SparseMessage& m, std::uint32_t msg_seq, std::uint32_t total, std::vector<BatchHalf>& out);
  void parse_produce_request(Reader& r, const SparseMessage& m, std::uint32_t msg_seq, PendingRequest& req,
                             bool& acks0);
  void parse_fetch_response(Reader& r, const SparseMessage& m, std::uint32_t msg_seq, const PendingRequest& req,
                            std::vector<BatchHalf>& out);
  void parse_produce_response(Reader& r, PendingRequest& req);
  void emit_produced(PendingRequest& req, std::vector<BatchHalf>& out);
  void structure_lost(const Reader& r);
  // Record batches (kafka_record_batches.cpp).
  void records_field(Reader& r, bool flex, const SparseMessage& m, std::uint32_t msg_seq, BatchHalf::Side side,
                     const std::string& topic, std::int32_t partition, std::int32_t corr,
                     std::vector<PendingBatch>& out);
  void records(Reader& r, std::uint32_t end, const SparseMessage& m, std::uint32_t msg_seq, BatchHalf::Side side,
               const std::string& topic, std::int32_t partition, std::int32_t corr, std::vector<PendingBatch>& out);
};

}  // namespace skewscope::protocols::kafka
