// Payload records (a bounded prefix of the bytes of a send or receive on a Kafka or ZMTP socket)
// and the counters of the kernel side that produces them. Production: the `payloads` ring buffer
// of the tcp_syscalls object (payload_reader.hpp); tests: synthetic records.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "skewscope/abi/payload_event.h"

namespace skewscope {

struct PayloadRecord {
  skewscope_payload_event header{};
  std::vector<std::uint8_t> bytes;  // header.captured_len bytes
};

struct PayloadCounters {
  std::uint64_t emitted = 0;        // records submitted by the kernel side
  std::uint64_t truncated = 0;      // records whose call moved more bytes than were copied
  std::uint64_t ringbuf_full = 0;   // records lost: ring buffer full
  std::uint64_t read_failed = 0;    // user memory that could not be read
  std::uint64_t iov_truncated = 0;  // calls with more iovec segments than the bounded walk
  std::uint64_t arm_full = 0;       // calls not copied: per-thread table full
  std::uint64_t sockets_kafka = 0;  // sockets classified, by verdict (Kafka: client ends, followed)
  std::uint64_t sockets_zmtp = 0;
  std::uint64_t sockets_other = 0;
  std::uint64_t sockets_kafka_broker_side = 0;  // Kafka ends that received first: never copied
  std::uint64_t sockets_outside_domains = 0;    // --only-domains: first used outside them, never classified
  std::uint64_t outside_calls = 0;              // calls on a followed socket from outside every domain
  std::uint64_t sockets_mid_stream = 0;         // of the sockets classified from bytes: from mid-stream bytes
  std::uint64_t calls_without_buffer = 0;       // sock_tp: a followed socket's call no syscall's buffer names
  std::uint64_t recv_mirrored = 0;              // sock_tp: ZMTP receives not copied, their sender's copy serving
  std::uint64_t wakeups = 0;                    // records submitted with a forced wake-up of the reader
  std::uint64_t malformed_records = 0;          // records shorter than their header says (never decoded)
};

class PayloadSource {
 public:
  virtual ~PayloadSource() = default;
  // Appends the records available now (never waits). False when the source failed.
  virtual bool poll(std::vector<PayloadRecord>& out) = 0;
  // Returns when records may be waiting: at the source's wake-up (the kernel side forces one
  // when its ring fills up), or after `timeout`.
  virtual void wait(std::chrono::milliseconds timeout) { std::this_thread::sleep_for(timeout); }
  virtual PayloadCounters counters() const = 0;
  virtual std::string error() const { return "the payload source ended"; }
  // Takes back the byte buffers of a batch the agent has read (it may leave them empty), for the
  // next polls to fill instead of allocating one per record. Called by the thread that polls.
  virtual void recycle(std::vector<PayloadRecord>& batch) { (void)batch; }
  // Before a long wait (agent/runtime/ring_drain.hpp, "idle"): asks the kernel side to wake the
  // next poll at its next record. False when it cannot; the loop then keeps its busy pace.
  virtual bool arm_idle_wakeup() { return false; }
};

}  // namespace skewscope
