// Synthetic ABI halves for many TCP flows between two "hosts" (network namespaces), as the kernel
// side would produce them: writes stamped at entry with write_seq, reads stamped at exit with
// copied_seq. One epoch of traffic is generated once; later epochs are the same records shifted
// in time and sequence space, so a benchmark can run for as long as it likes without generating
// anything in its timed loop.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "skewscope/abi/half_event.h"

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
  std::int64_t duration_ns = 0;        // shift of ts_ns from one epoch to the next
  std::uint32_t bytes_per_flow = 0;    // shift of seq from one epoch to the next (same for all flows)
  std::size_t messages = 0;
};

inline void put_ipv4_mapped(std::uint8_t out[16], std::uint8_t last_octet) {
  std::memset(out, 0, 16);
  out[10] = out[11] = 0xff;
  out[12] = 10;
  out[13] = 77;
  out[14] = 0;
  out[15] = last_octet;
}

inline skewscope_half_event make_half(bool send, std::uint16_t client_port, std::uint32_t seq, std::uint32_t bytes,
                                      std::int64_t t) {
  skewscope_half_event e{};
  e.ts_ns = static_cast<std::uint64_t>(t);
  // Sender 10.77.0.1:client_port -> receiver 10.77.0.2:5000; each half from its own socket's view.
  put_ipv4_mapped(e.local_addr, send ? 1 : 2);
  put_ipv4_mapped(e.remote_addr, send ? 2 : 1);
  e.local_port = send ? client_port : 5000;
  e.remote_port = send ? 5000 : client_port;
  e.netns_ino = send ? kSenderNetns : kReceiverNetns;
  e.seq = seq;
  e.bytes = bytes;
  e.kind = send ? SKEWSCOPE_HALF_SEND : SKEWSCOPE_HALF_RECV;
  e.syscall = send ? SKEWSCOPE_SYS_WRITE : SKEWSCOPE_SYS_READ;
  e.pid = e.tid = 4242;
  std::memcpy(e.comm, "bench", 6);
  return e;
}

// Round robin over the flows: every flow writes one message, then every flow reads it (so up to
// `flows` sends wait at once, as with many connections in flight), in ring-buffer order.
inline Epoch make_epoch(const TrafficShape& shape) {
  Epoch epoch;
  const int halves_per_round = shape.flows * (1 + static_cast<int>(shape.read_bytes.size()));
  const int rounds = std::max(1, shape.halves_per_epoch / halves_per_round);
  std::vector<std::uint32_t> seq(static_cast<std::size_t>(shape.flows));
  for (int f = 0; f < shape.flows; ++f) seq[static_cast<std::size_t>(f)] = 1000u + 7919u * static_cast<std::uint32_t>(f);
  std::int64_t t = 1'000'000'000;
  epoch.records.reserve(static_cast<std::size_t>(rounds * halves_per_round));
  for (int r = 0; r < rounds; ++r) {
    const std::int64_t round_start = t;
    for (int f = 0; f < shape.flows; ++f) {
      auto port = static_cast<std::uint16_t>(10000 + f);
      epoch.records.push_back(make_half(true, port, seq[static_cast<std::size_t>(f)], shape.write_bytes, t));
      t += shape.message_gap_ns;
    }
    for (int f = 0; f < shape.flows; ++f) {
      auto port = static_cast<std::uint16_t>(10000 + f);
      std::uint32_t s = seq[static_cast<std::size_t>(f)];
      std::int64_t rt = round_start + f * shape.message_gap_ns + shape.one_way_ns;
      for (std::uint32_t n : shape.read_bytes) {
        epoch.records.push_back(make_half(false, port, s, n, rt));
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
