// A synthetic TCP stream between two "hosts" (network namespaces), producing the ABI records the
// kernel side would: writes stamped at entry with write_seq, reads stamped at exit with
// copied_seq, however the reader splits or coalesces the bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "capture/event_source.hpp"

namespace skewscope::test {

struct Endpoint {
  std::uint8_t last_octet;  // 10.77.0.X as IPv4-mapped IPv6
  std::uint16_t port;
  std::uint32_t netns;
};

inline void put_ipv4(std::uint8_t out[16], std::uint8_t last_octet) {
  std::memset(out, 0, 16);
  out[10] = out[11] = 0xff;
  out[12] = 10;
  out[13] = 77;
  out[14] = 0;
  out[15] = last_octet;
}

class SyntheticStream {
 public:
  SyntheticStream(Endpoint sender, Endpoint receiver, std::uint32_t initial_seq)
      : from_(sender), to_(receiver), write_seq_(initial_seq), read_seq_(initial_seq) {}

  // A write of `bytes` at true time t (entry).
  skewscope_half_event write(std::uint32_t bytes, std::int64_t t) {
    auto e = make(from_, to_, SKEWSCOPE_HALF_SEND, write_seq_, bytes, t);
    write_seq_ += bytes;
    return e;
  }
  // A read returning `bytes` at true time t (exit).
  skewscope_half_event read(std::uint32_t bytes, std::int64_t t) {
    auto e = make(to_, from_, SKEWSCOPE_HALF_RECV, read_seq_, bytes, t);
    read_seq_ += bytes;
    return e;
  }
  std::uint32_t unread() const { return write_seq_ - read_seq_; }

 private:
  static skewscope_half_event make(const Endpoint& local, const Endpoint& remote, std::uint8_t kind,
                                   std::uint32_t seq, std::uint32_t bytes, std::int64_t t) {
    skewscope_half_event e{};
    e.ts_ns = static_cast<std::uint64_t>(t);
    put_ipv4(e.local_addr, local.last_octet);
    put_ipv4(e.remote_addr, remote.last_octet);
    e.local_port = local.port;
    e.remote_port = remote.port;
    e.seq = seq;
    e.bytes = bytes;
    e.netns_ino = local.netns;
    e.kind = kind;
    e.pid = e.tid = 4242;
    return e;
  }

  Endpoint from_, to_;
  std::uint32_t write_seq_, read_seq_;
};

// Replays prepared records in batches: the agent core's view of a ring buffer.
class SyntheticSource final : public EventSource {
 public:
  explicit SyntheticSource(std::vector<skewscope_half_event> events, std::size_t batch = 64)
      : events_(std::move(events)), batch_(batch) {}
  bool poll(std::vector<skewscope_half_event>& out, std::chrono::milliseconds) override {
    if (next_ >= events_.size()) return false;
    std::size_t end = std::min(events_.size(), next_ + batch_);
    out.insert(out.end(), events_.begin() + static_cast<long>(next_), events_.begin() + static_cast<long>(end));
    next_ = end;
    return true;
  }
  SourceCounters counters() const override {
    SourceCounters c;
    c.emitted = next_;
    return c;
  }

 private:
  std::vector<skewscope_half_event> events_;
  std::size_t batch_;
  std::size_t next_ = 0;
};

}  // namespace skewscope::test
