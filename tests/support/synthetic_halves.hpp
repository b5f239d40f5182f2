// Synthetic ABI halves, as the kernel side records them: writes stamped at entry with write_seq,
// reads stamped at exit with copied_seq, each from its own socket's point of view. The one record
// maker of the unit tests (tests/unit/) and the benchmarks that feed the agent core without a
// ring buffer (bench/correlator, bench/exchange).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "capture/event_source.hpp"
#include "skewscope/abi/wire_event.h"

namespace skewscope::test {

// One end of a TCP connection in a "host" (network namespace): IPv4 address NET.last_octet,
// as IPv4-mapped IPv6 in the record. NET is the lab's 10.77.0 unless given.
struct Endpoint {
  std::uint8_t last_octet;
  std::uint16_t port;
  std::uint32_t netns;
  std::array<std::uint8_t, 3> net{10, 77, 0};
};

inline void put_ipv4_mapped(std::uint8_t out[16], const Endpoint& end) {
  std::memset(out, 0, 16);
  out[10] = out[11] = 0xff;
  std::copy(end.net.begin(), end.net.end(), out + 12);
  out[15] = end.last_octet;
}

// A send (stamped at entry) or a receive (stamped at exit) of `bytes` at sequence `seq`, recorded
// by the socket at `local` connected to `remote`, at true time t.
inline skewscope_half_event make_half(const Endpoint& local, const Endpoint& remote, bool send, std::uint32_t seq,
                                      std::uint32_t bytes, std::int64_t t) {
  skewscope_half_event e{};
  e.ts_ns = static_cast<std::uint64_t>(t);
  put_ipv4_mapped(e.local_addr, local);
  put_ipv4_mapped(e.remote_addr, remote);
  e.local_port = local.port;
  e.remote_port = remote.port;
  e.netns_ino = local.netns;
  e.seq = seq;
  e.bytes = bytes;
  e.kind = send ? SKEWSCOPE_HALF_SEND : SKEWSCOPE_HALF_RECV;
  e.syscall = send ? SKEWSCOPE_SYS_WRITE : SKEWSCOPE_SYS_READ;
  e.pid = e.tid = 4242;
  return e;
}

// A TCP segment with `bytes` of payload at sequence `seq` from `sender` to `receiver`, as the tc
// programs record it where it leaves the sender's interface (egress) or enters the receiver's
// (ingress), at CLOCK_MONOTONIC time t; `hardware_ns` (the NIC's PHC timescale) 0 for none.
inline skewscope_wire_event make_wire_segment(const Endpoint& sender, const Endpoint& receiver, bool egress,
                                              std::uint32_t seq, std::uint32_t bytes, std::int64_t t,
                                              std::uint32_t ifindex = 2, std::int64_t hardware_ns = 0) {
  const Endpoint& local = egress ? sender : receiver;
  const Endpoint& remote = egress ? receiver : sender;
  skewscope_wire_event e{};
  e.mono_ns = static_cast<std::uint64_t>(t);
  e.hw_ns = static_cast<std::uint64_t>(hardware_ns);
  put_ipv4_mapped(e.local_addr, local);
  put_ipv4_mapped(e.remote_addr, remote);
  e.local_port = local.port;
  e.remote_port = remote.port;
  e.seq = seq;
  e.bytes = bytes;
  e.netns_ino = local.netns;
  e.ifindex = ifindex;
  e.direction = egress ? SKEWSCOPE_WIRE_EGRESS : SKEWSCOPE_WIRE_INGRESS;
  e.origin = SKEWSCOPE_WIRE_FROM_TC;
  return e;
}

// One direction of a TCP stream: however the reader splits or coalesces the bytes, its reads
// carry the sequence numbers the writes did.
class SyntheticStream {
 public:
  SyntheticStream(Endpoint sender, Endpoint receiver, std::uint32_t initial_seq)
      : from_(sender), to_(receiver), write_seq_(initial_seq), read_seq_(initial_seq) {}

  // A write of `bytes` at true time t (entry).
  skewscope_half_event write(std::uint32_t bytes, std::int64_t t) {
    auto e = make_half(from_, to_, true, write_seq_, bytes, t);
    write_seq_ += bytes;
    return e;
  }
  // A read returning `bytes` at true time t (exit).
  skewscope_half_event read(std::uint32_t bytes, std::int64_t t) {
    auto e = make_half(to_, from_, false, read_seq_, bytes, t);
    read_seq_ += bytes;
    return e;
  }
  std::uint32_t unread() const { return write_seq_ - read_seq_; }

 private:
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
