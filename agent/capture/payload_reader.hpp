// Reads the `payloads` ring buffer and the payload counters of a loaded tcp_syscalls object
// (capture/tcp_syscall_capture.hpp opens it; this only reads the two maps by their fds).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "capture/counter_slices.hpp"
#include "capture/payload_source.hpp"
#include "capture/ring_wait.hpp"
#include "skewscope/result.hpp"

struct ring_buffer;

namespace skewscope {

class PayloadRingReader final : public PayloadSource {
 public:
  // ring_fd: the BPF_MAP_TYPE_RINGBUF map; counters_fd: the payload_counters array (a slice per
  // CPU, capture/counter_slices.hpp), mapped here; idle_flag: the programs' payload_reader_idle
  // (TcpSyscallCapture::payload_idle_flag; null: never armed), which must outlive this reader.
  using Opened = Result<std::unique_ptr<PayloadRingReader>>;
  static Opened open(int ring_fd, int counters_fd, std::uint32_t* idle_flag = nullptr);
  ~PayloadRingReader() override;
  PayloadRingReader(const PayloadRingReader&) = delete;
  PayloadRingReader& operator=(const PayloadRingReader&) = delete;

  bool poll(std::vector<PayloadRecord>& out) override;
  void wait(std::chrono::milliseconds timeout) override;
  bool arm_idle_wakeup() override { return idle_flag_.arm(); }
  // Ends a wait at once, and every later one (the agent is stopping). From any thread.
  void interrupt_wait() { wait_->interrupt(); }
  PayloadCounters counters() const override;
  std::string error() const override { return error_; }
  // Keeps up to kSpareBuffers buffers of at most kSpareBytes: a request/reply message is one small
  // record, and allocating its bytes was a tenth of the agent's time under ZMTP REQ/REP load.
  // Larger buffers are freed (their allocation is small beside their bytes), so what is kept
  // stays under 512 KiB.
  void recycle(std::vector<PayloadRecord>& batch) override;
  // A pass stops after this many records: the caller's vector stays bounded.
  static constexpr std::size_t kMaxBatch = 8192;
  static constexpr std::size_t kSpareBuffers = 1024;
  static constexpr std::size_t kSpareBytes = 512;

 private:
  PayloadRingReader() = default;
  static int on_record(void* ctx, void* data, std::size_t size);

  ring_buffer* ring_ = nullptr;
  std::optional<RingWait> wait_;  // on ring_'s epoll set
  int wait_error_ = 0;            // errno of a failed wait, reported by the next poll
  ReaderIdleFlag idle_flag_;
  std::optional<CounterSlices> counters_;
  std::vector<PayloadRecord>* sink_ = nullptr;
  std::vector<std::vector<std::uint8_t>> spare_;  // see recycle()
  std::atomic<std::uint64_t> malformed_{0};
  std::string error_;
};

}  // namespace skewscope
