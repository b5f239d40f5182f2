#include "capture/payload_reader.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

namespace skewscope {

PayloadRingReader::Opened PayloadRingReader::open(int ring_fd, int counters_fd, std::uint32_t* idle_flag) {
  std::unique_ptr<PayloadRingReader> self(new PayloadRingReader());
  auto counters = CounterSlices::map(counters_fd, SKEWSCOPE_PCNT__COUNT);
  if (!counters) return Opened::fail("the payload counters: " + counters.error);
  self->counters_.emplace(std::move(*counters));
  self->ring_ = ring_buffer__new(ring_fd, &PayloadRingReader::on_record, self.get(), nullptr);
  if (!self->ring_) {
    return Opened::fail(std::string("creating the payload ring buffer reader: ") + std::strerror(errno));
  }
  auto wait = RingWait::attach(ring_buffer__epoll_fd(self->ring_));
  if (!wait) return Opened::fail("the payload ring buffer reader: " + wait.error);
  self->wait_.emplace(std::move(*wait));
  self->idle_flag_ = ReaderIdleFlag(idle_flag);
  return Opened::ok(std::move(self));
}

PayloadRingReader::~PayloadRingReader() {
  if (ring_) ring_buffer__free(ring_);
}

namespace {
constexpr int kBatchFull = -ENOBUFS;  // stops a consume pass (see TcpSyscallCapture::on_record)
}

int PayloadRingReader::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<PayloadRingReader*>(ctx);
  skewscope_payload_event header;
  if (size < sizeof header) {
    self->malformed_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  std::memcpy(&header, data, sizeof header);
  if (header.captured_len != size - sizeof header || header.captured_len > SKEWSCOPE_PAYLOAD_MAX) {
    self->malformed_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  PayloadRecord& record = self->sink_->emplace_back();
  if (header.captured_len <= kSpareBytes && !self->spare_.empty()) {
    record.bytes = std::move(self->spare_.back());
    self->spare_.pop_back();
  }
  record.header = header;
  const auto* bytes = static_cast<const std::uint8_t*>(data) + sizeof header;
  record.bytes.assign(bytes, bytes + header.captured_len);
  return self->sink_->size() >= kMaxBatch ? kBatchFull : 0;
}

void PayloadRingReader::recycle(std::vector<PayloadRecord>& batch) {
  for (PayloadRecord& record : batch) {
    if (spare_.size() >= kSpareBuffers) return;
    if (record.bytes.capacity() == 0 || record.bytes.capacity() > kSpareBytes) continue;
    spare_.push_back(std::move(record.bytes));
  }
}

bool PayloadRingReader::poll(std::vector<PayloadRecord>& out) {
  if (wait_error_) {
    error_ = std::string("waiting on the payload ring buffer failed: ") + std::strerror(wait_error_);
    return false;
  }
  sink_ = &out;
  // Records are submitted without a wake-up (like the halves): consume what is there.
  int n = out.size() < kMaxBatch ? ring_buffer__consume(ring_) : 0;
  sink_ = nullptr;
  if (n >= 0 || n == -EINTR || n == kBatchFull) return true;
  error_ = std::string("reading the payload ring buffer failed: ") + std::strerror(-n);
  return false;
}

void PayloadRingReader::wait(std::chrono::milliseconds timeout) {
  // Only the wait: the records stay in the ring for poll(), which bounds the batch, and which
  // reports a failed wait (the loop would otherwise spin on it).
  if (const int err = wait_->wait(timeout)) wait_error_ = err;
}

PayloadCounters PayloadRingReader::counters() const {
  PayloadCounters c;
  c.malformed_records = malformed_.load(std::memory_order_relaxed);
  const std::vector<std::uint64_t> slots =
      counters_ ? counters_->sums() : std::vector<std::uint64_t>(SKEWSCOPE_PCNT__COUNT, 0);
  auto sum = [&](std::uint32_t slot) { return slots[slot]; };
  c.emitted = sum(SKEWSCOPE_PCNT_EMITTED);
  c.truncated = sum(SKEWSCOPE_PCNT_TRUNCATED);
  c.ringbuf_full = sum(SKEWSCOPE_PCNT_RINGBUF_FULL);
  c.read_failed = sum(SKEWSCOPE_PCNT_READ_FAILED);
  c.iov_truncated = sum(SKEWSCOPE_PCNT_IOV_TRUNCATED);
  c.arm_full = sum(SKEWSCOPE_PCNT_ARM_FULL);
  c.sockets_kafka = sum(SKEWSCOPE_PCNT_CLASSIFIED_KAFKA);
  c.sockets_zmtp = sum(SKEWSCOPE_PCNT_CLASSIFIED_ZMTP);
  c.sockets_other = sum(SKEWSCOPE_PCNT_CLASSIFIED_OTHER);
  c.sockets_kafka_broker_side = sum(SKEWSCOPE_PCNT_CLASSIFIED_KAFKA_BROKER_SIDE);
  c.sockets_outside_domains = sum(SKEWSCOPE_PCNT_CLASSIFIED_OUTSIDE_DOMAINS);
  c.outside_calls = sum(SKEWSCOPE_PCNT_OUTSIDE_CALLS);
  c.wakeups = sum(SKEWSCOPE_PCNT_WAKEUPS);
  c.sockets_mid_stream = sum(SKEWSCOPE_PCNT_CLASSIFIED_MID_STREAM);
  c.calls_without_buffer = sum(SKEWSCOPE_PCNT_NO_SYSCALL_BUFFER);
  c.recv_mirrored = sum(SKEWSCOPE_PCNT_RECV_MIRRORED);
  return c;
}

}  // namespace skewscope
