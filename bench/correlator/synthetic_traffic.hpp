// Synthetic traffic of many TCP flows between two "hosts" (network namespaces), made of the
// halves of tests/support/synthetic_halves.hpp. One epoch of traffic is generated once; later
// epochs are the same records shifted in time and sequence space, so a benchmark can run for as
// long as it likes without generating anything in its timed loop.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "synthetic_halves.hpp"

namespace skewscope::bench {

inline constexpr std::uint32_t kSenderNetns = 11, kReceiverNetns = 22;

struct TrafficShape {
  int flows = 64;
  std::uint32_t write_bytes = 100;
  std::vector<std::uint32_t> read_bytes{100};  // one message's reads; they must sum to write_bytes
  std::int64_t message_gap_ns = 10'000;        // between messages (all flows together): 100 k msg/s
  std::int64_t one_way_ns = 50'000;            // send entry -> receive exit
  int halves_per_epoch = 1 << 17;
};

struct Epoch {
  std::vector<skewscope_half_event> records;
  std::int64_t duration_ns = 0;      // shift of ts_ns from one epoch to the next
  std::uint32_t bytes_per_flow = 0;  // shift of seq from one epoch to the next (same for all flows)
  std::size_t messages = 0;
};

// A half of flow `client_port`: sender 10.77.0.1:client_port -> receiver 10.77.0.2:5000.
inline skewscope_half_event flow_half(bool send, std::uint16_t client_port, std::uint32_t seq, std::uint32_t bytes,
                                      std::int64_t t) {
  const test::Endpoint client{1, client_port, kSenderNetns}, server{2, 5000, kReceiverNetns};
  return send ? test::make_half(client, server, true, seq, bytes, t)
              : test::make_half(server, client, false, seq, bytes, t);
}

// Round robin over the flows: every flow writes one message, then every flow reads it (so up to
// `flows` sends wait at once, as with many connections in flight), in ring-buffer order.
inline Epoch make_epoch(const TrafficShape& shape) {
  Epoch epoch;
  const int halves_per_round = shape.flows * (1 + static_cast<int>(shape.read_bytes.size()));
  const int rounds = std::max(1, shape.halves_per_epoch / halves_per_round);
  std::vector<std::uint32_t> seq(static_cast<std::size_t>(shape.flows));
  for (int f = 0; f < shape.flows; ++f)
    seq[static_cast<std::size_t>(f)] = 1000u + 7919u * static_cast<std::uint32_t>(f);
  std::int64_t t = 1'000'000'000;
  epoch.records.reserve(static_cast<std::size_t>(rounds * halves_per_round));
  for (int r = 0; r < rounds; ++r) {
    const std::int64_t round_start = t;
    for (int f = 0; f < shape.flows; ++f) {
      auto port = static_cast<std::uint16_t>(10000 + f);
      epoch.records.push_back(flow_half(true, port, seq[static_cast<std::size_t>(f)], shape.write_bytes, t));
      t += shape.message_gap_ns;
    }
    for (int f = 0; f < shape.flows; ++f) {
      auto port = static_cast<std::uint16_t>(10000 + f);
      std::uint32_t s = seq[static_cast<std::size_t>(f)];
      std::int64_t rt = round_start + f * shape.message_gap_ns + shape.one_way_ns;
      for (std::uint32_t n : shape.read_bytes) {
        epoch.records.push_back(flow_half(false, port, s, n, rt));
        s += n;
        rt += 1'000;
      }
      seq[static_cast<std::size_t>(f)] += shape.write_bytes;
    }
    epoch.messages += static_cast<std::size_t>(shape.flows);
  }
  epoch.duration_ns = t - 1'000'000'000;
  epoch.bytes_per_flow = static_cast<std::uint32_t>(rounds) * shape.write_bytes;
  return epoch;
}

// Replays epochs in batches, shifting each epoch after the first (what a ring buffer read gives
// the agent: a copy of the records into a vector).
class Replayer {
 public:
  explicit Replayer(const Epoch& epoch, std::size_t batch) : epoch_(epoch), batch_(batch) {}

  // Fills `out` with the next batch; returns the CLOCK_MONOTONIC time of its last record.
  std::int64_t next(std::vector<skewscope_half_event>& out) {
    out.clear();
    const auto& recs = epoch_.records;
    for (std::size_t i = 0; i < batch_; ++i) {
      if (pos_ == recs.size()) {
        pos_ = 0;
        ++round_;
      }
      skewscope_half_event e = recs[pos_++];
      e.ts_ns += static_cast<std::uint64_t>(round_ * epoch_.duration_ns);
      e.seq += static_cast<std::uint32_t>(round_) * epoch_.bytes_per_flow;
      out.push_back(e);
    }
    return static_cast<std::int64_t>(out.back().ts_ns);
  }

 private:
  const Epoch& epoch_;
  std::size_t batch_;
  std::size_t pos_ = 0;
  std::int64_t round_ = 0;
};

}  // namespace skewscope::bench
