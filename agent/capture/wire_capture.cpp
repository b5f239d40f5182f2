// WireCapture's lifecycle and reading: choosing the tc variant and the send side (features.hpp's
// candidate tables; the objects are wire_programs.cpp's), holding the receive-timestamp key,
// attaching per interface (through wire_tc_attach), and reading the ring buffer and counters; undone in the destructor.
#include "capture/wire_capture.hpp"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/net_tstamp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "capture/ring_batch.hpp"
#include "capture/wire_tc_attach.hpp"

namespace skewscope {

namespace {

// The inode of each named interface's namespace (the ctx variant is loaded once per namespace,
// with it). A namespace that cannot be read is the operator's to fix: an error.
Result<std::map<std::string, std::uint32_t>> namespaces_of(const std::vector<WireInterface>& interfaces) {
  std::map<std::string, std::uint32_t> out;
  for (const auto& iface : interfaces) {
    const std::string path = iface.netns_path.empty() ? "/proc/self/ns/net" : iface.netns_path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      return Result<std::map<std::string, std::uint32_t>>::fail("cannot open network namespace " + path + ": " +
                                                                std::strerror(errno));
    out[iface.netns_path] = static_cast<std::uint32_t>(st.st_ino);
  }
  return Result<std::map<std::string, std::uint32_t>>::ok(std::move(out));
}

}  // namespace

Result<WireOpened> WireCapture::open(const WireOptions& options, const KernelFeatures& features) {
  const auto& interfaces = options.interfaces;
  WireOpened opened;
  std::unique_ptr<WireCapture> self(new WireCapture());
  auto namespaces = namespaces_of(interfaces);
  if (!namespaces) return Result<WireOpened>::fail(namespaces.error);
  // The send side first, on paper: whether tc egress carries data segments is a setting of the
  // tc objects. sock_ops is excluded without --wire-cgroup; if it is chosen but the kernel then
  // refuses it, tc egress serves and the tc objects are loaded again with egress data on.
  std::map<std::string, std::string> send_excluded;
  if (options.cgroups.empty()) send_excluded[kSendPathSockOps] = "no --wire-cgroup given";
  const auto send_on_paper = choose_candidate(features, wire_send_candidates(), send_excluded);
  const CandidateChoice* send_choice = chosen_of(send_on_paper);
  WireProgramSettings settings;
  settings.ack_samples = options.ack_samples;
  settings.netns_inodes = *namespaces;
  auto load_tc = [&](const FamilyCandidate& c) { return self->programs_.load_tc(c.variant, settings); };
  settings.egress_data = !(send_choice && send_choice->candidate.variant == kSendPathSockOps);
  LoadableCandidate wire = choose_loadable_candidate(features, wire_candidates(), {}, load_tc);
  opened.wire = wire.status;
  if (!wire.status.up) {
    opened.send = {false, wire.status.reason, "", "no wire variant loads: " + wire.status.detail};
    return Result<WireOpened>::ok(std::move(opened));
  }
  LoadableCandidate send =
      choose_loadable_candidate(features, wire_send_candidates(), send_excluded, [&](const FamilyCandidate& c) {
        if (c.variant == kSendPathSockOps) return self->programs_.load_sockops();
        return Status::ok();  // the tc egress program is loaded
      });
  opened.send = send.status;
  self->send_path_ = send.status.up ? send.status.variant : std::string(kSendPathTcEgress);
  if (self->send_path_ == kSendPathTcEgress && !settings.egress_data) {
    // sock_ops refused at load: the tc objects must stamp egress data after all.
    settings.egress_data = true;
    const FamilyCandidate* running = nullptr;
    for (const auto& c : wire.choices)
      if (c.chosen) running = &c.candidate;
    if (Status again = load_tc(*running); !again)
      return Result<WireOpened>::fail("reloading the " + running->variant +
                                      " tc programs for tc egress: " + again.error);
  }
  for (const auto& c : send.choices)
    if (!c.chosen && self->send_path_reason_.empty() && c.candidate.variant == kSendPathSockOps)
      self->send_path_reason_ = c.reason;
  if (self->send_path_ == kSendPathSockOps)
    self->send_path_reason_ = "--wire-cgroup given and the kernel has and loads the sock_ops TX timestamping callbacks";
  if (self->send_path_ == kSendPathSockOps) {
    for (const auto& path : options.cgroups) {
      int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        return Result<WireOpened>::fail("--wire-cgroup " + path + ": " + std::strerror(errno));
      }
      bpf_link* link = self->programs_.attach_sockops(fd);
      int err = errno;
      ::close(fd);
      if (!link) {
        return Result<WireOpened>::fail("attaching the sock_ops program to " + path + ": " + std::strerror(err));
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
    const Status attached = attach_wire_filters(slot, self->programs_.ingress_fd(iface.netns_path),
                                                self->programs_.egress_fd(iface.netns_path), tc_egress);
    if (!attached) return Result<WireOpened>::fail(attached.error);  // the destructor detaches what was attached
  }
  self->ring_ = ring_buffer__new(self->programs_.ring_fd(), &WireCapture::on_record, self.get(), nullptr);
  if (!self->ring_) {
    return Result<WireOpened>::fail(std::string("creating the wire ring buffer reader: ") + std::strerror(errno));
  }
  auto counters = CounterSlices::map(self->programs_.counters_fd(), SKEWSCOPE_WIRE_CNT__COUNT);
  if (!counters) return Result<WireOpened>::fail("the wire counters: " + counters.error);
  self->counters_.emplace(std::move(*counters));
  opened.capture = std::move(self);
  return Result<WireOpened>::ok(std::move(opened));
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
  // programs_ closes the objects after this body.
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
  const std::vector<std::uint64_t> slots =
      counters_ ? counters_->sums() : std::vector<std::uint64_t>(SKEWSCOPE_WIRE_CNT__COUNT, 0);
  auto sum = [&](std::uint32_t slot) { return slots[slot]; };
  c.emitted = sum(SKEWSCOPE_WIRE_CNT_EMITTED);
  c.ringbuf_full = sum(SKEWSCOPE_WIRE_CNT_RINGBUF_FULL);
  c.rx_skb_stamped = sum(SKEWSCOPE_WIRE_CNT_RX_SKB_STAMPED);
  c.rx_unstamped = sum(SKEWSCOPE_WIRE_CNT_RX_UNSTAMPED);
  c.hw_stamped = sum(SKEWSCOPE_WIRE_CNT_HW_STAMPED);
  c.not_parsed = sum(SKEWSCOPE_WIRE_CNT_NOT_PARSED);
  return c;
}

}  // namespace skewscope
