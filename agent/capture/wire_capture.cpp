// WireCapture's lifecycle and reading: choosing the send side, loading the wire_tc (and
// wire_sockops) objects, holding the receive-timestamp key, attaching per interface (through
// wire_tc_attach), and reading the ring buffer and counters; undone in the destructor.
#include "capture/wire_capture.hpp"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/net_tstamp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "capture/percpu_counters.hpp"
#include "capture/ring_batch.hpp"
#include "capture/wire_tc_attach.hpp"
#include "wire_sockops.skel.h"
#include "wire_tc.skel.h"

namespace skewscope {

Result<std::unique_ptr<WireCapture>> WireCapture::open(const WireOptions& options) {
  using Opened = Result<std::unique_ptr<WireCapture>>;
  const auto& interfaces = options.interfaces;
  std::unique_ptr<WireCapture> self(new WireCapture());
  // The send side, decided once: sock_ops where the operator named cgroups and the kernel has
  // the callbacks; tc egress otherwise (and then every named interface gets an egress filter).
  const bool callbacks = kernel_has_tx_timestamping_callbacks();
  if (!options.cgroups.empty() && callbacks) {
    self->send_path_ = kSendPathSockOps;
    self->send_path_reason_ = "--wire-cgroup given and the kernel has the sock_ops TX timestamping callbacks";
  } else {
    self->send_path_ = kSendPathTcEgress;
    self->send_path_reason_ = options.cgroups.empty()
                                  ? "no --wire-cgroup: segments are stamped at tc egress of the named interfaces"
                                  : "the kernel has no sock_ops TX timestamping callbacks (Linux < 6.14)";
  }
  // Data segments at egress only with the tc send side; ACK samples leave through egress too.
  self->skel_ = wire_tc__open();
  if (!self->skel_) {
    return Opened::fail(std::string("opening BPF object wire_tc: ") + std::strerror(errno));
  }
  self->skel_->rodata->egress_data = self->send_path_ == kSendPathTcEgress ? 1 : 0;
  self->skel_->rodata->ack_samples = options.ack_samples ? 1 : 0;
  if (int err = wire_tc__load(self->skel_)) {
    return Opened::fail(std::string("loading BPF object wire_tc: ") + std::strerror(-err));
  }
  if (self->send_path_ == kSendPathSockOps) {
    self->sockops_ = wire_sockops__open();
    if (!self->sockops_) {
      return Opened::fail(std::string("opening BPF object wire_sockops: ") + std::strerror(errno));
    }
    // One ring buffer and one set of counters for both objects: one reader, one count.
    bpf_map__reuse_fd(self->sockops_->maps.wire_halves, bpf_map__fd(self->skel_->maps.wire_halves));
    bpf_map__reuse_fd(self->sockops_->maps.wire_counters, bpf_map__fd(self->skel_->maps.wire_counters));
    if (int err = wire_sockops__load(self->sockops_)) {
      return Opened::fail(std::string("loading BPF object wire_sockops: ") + std::strerror(-err));
    }
    for (const auto& path : options.cgroups) {
      int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        return Opened::fail("--wire-cgroup " + path + ": " + std::strerror(errno));
      }
      bpf_link* link = bpf_program__attach_cgroup(self->sockops_->progs.wire_sockops, fd);
      int err = errno;
      ::close(fd);
      if (!link) {
        return Opened::fail("attaching the sock_ops program to " + path + ": " + std::strerror(err));
      }
      self->cgroup_links_.push_back(link);
    }
  }
  const bool tc_egress = self->send_path_ == kSendPathTcEgress || options.ack_samples;
  // The receive stamp: hold the net_timestamp static key for as long as the agent runs.
  self->rx_stamp_socket_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (self->rx_stamp_socket_ >= 0) {
    int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    if (::setsockopt(self->rx_stamp_socket_, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) != 0) {
      ::close(self->rx_stamp_socket_);
      self->rx_stamp_socket_ = -1;  // receives are then stamped by the program (counted)
    }
  }
  const int ingress_fd = bpf_program__fd(self->skel_->progs.wire_ingress);
  const int egress_fd = bpf_program__fd(self->skel_->progs.wire_egress);
  for (const auto& iface : interfaces) {
    WireAttachment a;
    a.iface = iface;
    if (auto ts = read_ts_info(iface)) {  // optional: veths answer
      a.phc_index = ts->phc_index;
      a.so_timestamping = ts->so_timestamping;
    }
    // Recorded before attaching, so that the destructor undoes whatever part succeeded.
    self->attachments_.push_back(a);
    WireAttachment& slot = self->attachments_.back();
    const Status attached = attach_wire_filters(slot, ingress_fd, egress_fd, tc_egress);
    if (!attached) return Opened::fail(attached.error);  // the destructor detaches what was attached
  }
  self->ring_ =
      ring_buffer__new(bpf_map__fd(self->skel_->maps.wire_halves), &WireCapture::on_record, self.get(), nullptr);
  if (!self->ring_) {
    return Opened::fail(std::string("creating the wire ring buffer reader: ") + std::strerror(errno));
  }
  return Opened::ok(std::move(self));
}

void WireCapture::detach_all() {
  for (const auto& a : attachments_) {
    if (a.ifindex == 0) continue;
    detach_wire_filters(a);
  }
  attachments_.clear();
}

WireCapture::~WireCapture() {
  if (ring_) ring_buffer__free(ring_);
  for (bpf_link* link : cgroup_links_) bpf_link__destroy(link);
  detach_all();
  if (sockops_) wire_sockops__destroy(sockops_);
  if (skel_) wire_tc__destroy(skel_);
  if (rx_stamp_socket_ >= 0) ::close(rx_stamp_socket_);  // gives back our net_timestamp reference
}

int WireCapture::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<WireCapture*>(ctx);
  return append_ring_record(*self->sink_, self->malformed_, data, size, kMaxBatch);
}

bool WireCapture::poll(std::vector<skewscope_wire_event>& out, std::chrono::milliseconds timeout) {
  const int n = poll_ring_batch(ring_, sink_, out, kMaxBatch, timeout);
  if (n == 0) return true;
  error_ = std::string("reading the wire ring buffer failed: ") + std::strerror(-n);
  return false;
}

WireCounters WireCapture::counters() const {
  WireCounters c;
  c.malformed_records = malformed_.load(std::memory_order_relaxed);
  PerCpuCounters counters(bpf_map__fd(skel_->maps.wire_counters));
  if (!counters.usable()) return c;
  auto sum = [&](std::uint32_t slot) { return counters.sum(slot); };
  c.emitted = sum(SKEWSCOPE_WIRE_CNT_EMITTED);
  c.ringbuf_full = sum(SKEWSCOPE_WIRE_CNT_RINGBUF_FULL);
  c.rx_skb_stamped = sum(SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED);
  c.rx_unstamped = sum(SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED);
  c.hw_stamped = sum(SKEWSCOPE_WIRE_CNT_HW_STAMPED);
  c.not_parsed = sum(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
  return c;
}

}  // namespace skewscope
