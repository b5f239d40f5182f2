#pragma once
// Reading fixed-size records from a BPF ring buffer into a caller's bounded batch: shared by every
// capture whose records have one size (the syscall halves, the wire halves).
#include <bpf/libbpf.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace skewscope {

// Returned by the record callback to stop a consume pass: libbpf then advances past the record
// just copied and returns this value.
inline constexpr int kRingBatchFull = -ENOBUFS;

// The record callback's body: a record of another size is counted, never copied.
template <class Record>
int append_ring_record(std::vector<Record>& sink, std::atomic<std::uint64_t>& malformed, const void* data,
                       std::size_t size, std::size_t max_batch) {
  if (size != sizeof(Record)) {
    malformed.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  sink.push_back(*static_cast<const Record*>(data));
  return sink.size() >= max_batch ? kRingBatchFull : 0;
}

// Takes what is there, until `out` holds max_batch records. `sink` points at `out` only while
// libbpf calls back. Returns 0, or libbpf's negative error.
template <class Record>
int consume_ring_batch(ring_buffer* ring, std::vector<Record>*& sink, std::vector<Record>& out, std::size_t max_batch) {
  sink = &out;
  const int n = out.size() < max_batch ? ring_buffer__consume(ring) : 0;
  sink = nullptr;
  return n >= 0 || n == -EINTR || n == kRingBatchFull ? 0 : n;
}

// Waits up to `timeout`, then takes what is there (consume_ring_batch).
template <class Record>
int poll_ring_batch(ring_buffer* ring, std::vector<Record>*& sink, std::vector<Record>& out, std::size_t max_batch,
                    std::chrono::milliseconds timeout) {
  if (out.size() < max_batch) {
    // Returns early only on a forced wake-up (records are submitted silently until the ring is
    // a quarter full); epoll alone would never see the others, hence the explicit consume.
    sink = &out;
    const int n = ring_buffer__poll(ring, static_cast<int>(timeout.count()));
    sink = nullptr;
    if (n < 0 && n != -EINTR && n != kRingBatchFull) return n;
  }
  return consume_ring_batch(ring, sink, out, max_batch);
}

}  // namespace skewscope
