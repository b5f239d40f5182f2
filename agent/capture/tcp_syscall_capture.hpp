// The production EventSource: the tcp_syscalls BPF object (every TCP capture variant), opened,
// configured, loaded and attached in one RAII object; destroying it detaches everything.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "capture/event_source.hpp"
#include "capture/features.hpp"
#include "capture/payload_settings.hpp"

struct tcp_syscalls;  // generated skeleton
struct ring_buffer;
struct bpf_link;

namespace skewscope {

class TcpSyscallCapture final : public EventSource {
 public:
  // Loads the programs that `choices` chose; the agent's own process is excluded.
  // On failure returns null and sets `error` to which program failed and why.
  // `payload`: the payload capture's settings (max_bytes 0: off, see bpf/lib/payload_capture.bpf.h).
  static std::unique_ptr<TcpSyscallCapture> open(const std::vector<HookChoice>& choices, std::string& error,
                                                 const PayloadSettings& payload = {});
  ~TcpSyscallCapture() override;
  TcpSyscallCapture(const TcpSyscallCapture&) = delete;
  TcpSyscallCapture& operator=(const TcpSyscallCapture&) = delete;

  // Records are submitted without waking the reader (see bpf/lib/tcp_halves.bpf.h), so poll waits
  // for `timeout` (or a wake-up when the ring fills) and then consumes whatever is there, at most
  // kMaxBatch records: the caller's vector stays bounded however far behind it is.
  bool poll(std::vector<skewscope_half_event>& out, std::chrono::milliseconds timeout) override;
  static constexpr std::size_t kMaxBatch = 8192;
  SourceCounters counters() const override;
  std::string error() const override { return error_; }

  const std::vector<std::string>& attached() const { return attached_; }
  // The payload ring buffer and its counters (read by capture/payload_reader.hpp).
  int payload_ring_fd() const;
  int payload_counters_fd() const;
  // The variant of the loaded entry programs: "raw_tp", "btf" or "core_read" (see features.hpp).
  const std::string& variant() const { return variant_; }

 private:
  TcpSyscallCapture() = default;
  static int on_record(void* ctx, void* data, std::size_t size);

  tcp_syscalls* skel_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::vector<skewscope_half_event>* sink_ = nullptr;
  std::vector<bpf_link*> links_;  // attached by us (only chosen programs), destroyed before the skeleton
  std::vector<std::string> attached_;
  std::string variant_;
  // Records of the wrong size: counted, never decoded. Written by the polling thread, read by
  // counters() from any thread.
  std::atomic<std::uint64_t> malformed_{0};
  std::string error_;  // why poll failed; written and read by the polling thread only
};

}  // namespace skewscope
