// A paired send and receive: the value every stage after correlate consumes.
#pragma once

#include <cstdint>
#include <string>

#include "skewscope/saturating.hpp"

namespace skewscope {

// zmtp: one span per ZeroMQ message, found in the ZMTP framing of the captured bytes.
enum class Transport : std::uint8_t { tcp, kafka, zmq, rdma, zmtp };

inline const char* transport_name(Transport t) {
  switch (t) {
    case Transport::tcp: return "tcp";
    case Transport::kafka: return "kafka";
    case Transport::zmq: return "zmq";
    case Transport::rdma: return "rdma";
    case Transport::zmtp: return "zmtp";
  }
  return "unknown";
}

// Where a span's two timestamps were taken: at the syscalls (send entry, receive exit), or where
// the segment left and entered the hosts' network interfaces, stamped by software (tc programs,
// the kernel's receive stamp) or by the NICs' hardware clocks mapped to the system clock.
enum class TimestampSource : std::uint8_t { syscall, wire_software, wire_hardware };

inline const char* timestamp_source_name(TimestampSource s) {
  switch (s) {
    case TimestampSource::syscall: return "syscall";
    case TimestampSource::wire_software: return "wire_software";
    case TimestampSource::wire_hardware: return "wire_hardware";
  }
  return "syscall";
}

// Small dense id for a domain; names live in the DomainRegistry.
using DomainId = std::uint16_t;

struct Span {
  DomainId src = 0;  // sender's domain
  DomainId dst = 0;  // receiver's domain
  Transport transport = Transport::tcp;
  std::int64_t send_ns = 0;     // send time, in the sender's domain clock (ns since the Unix epoch)
  std::int64_t recv_ns = 0;     // receive time, in the receiver's domain clock
  std::int64_t capture_ns = 0;  // CLOCK_MONOTONIC of the receive: orders spans and ages windows
  std::uint32_t bytes = 0;      // bytes of the send (of all its messages, when messages > 1)
  TimestampSource timestamp_source = TimestampSource::syscall;
  // How many messages this span stands for: the ZMTP messages that one call wrote and one call
  // read share both stamps, so they are paired as one span (docs/pairing.md). Every statistic
  // counts a span `messages` times; 1 for every other transport, never 0.
  std::uint32_t messages = 1;

  // Saturated: two timestamps far apart (a hostile simulated offset) must not wrap into a span
  // of the wrong sign. Symmetric (never INT64_MIN) so that callers may negate it.
  std::int64_t span_ns() const {
    const std::int64_t s = sat_sub(recv_ns, send_ns);
    return s == kNsMin ? -kNsMax : s;
  }
};

}  // namespace skewscope
