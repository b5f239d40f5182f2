#include "capture/tcp_syscall_capture.hpp"
#include "capture/half_ring_size.hpp"
#include "capture/ring_batch.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "capture/libbpf_log.hpp"
#include "capture/program_verify.hpp"
#include "skewscope/abi/payload_event.h"
#include "tcp_syscalls.skel.h"

namespace skewscope {
namespace {

std::string take_libbpf_log() { return last_lines(take_libbpf_messages(), 6); }

}  // namespace
Result<std::unique_ptr<TcpSyscallCapture>, TcpSyscallCapture::NoVariant> TcpSyscallCapture::open_best(
    const KernelFeatures& features, const PayloadSettings& payload, std::uint32_t send_slots) {
  using Best = Result<std::unique_ptr<TcpSyscallCapture>, NoVariant>;
  std::unique_ptr<TcpSyscallCapture> loaded;
  LoadableHooks hooks =
      choose_loadable_hooks(features, tcp_hook_candidates(), [&](const std::vector<HookChoice>& choices) {
        auto attempt = load(choices, payload, send_slots);
        if (!attempt) return Status::fail(attempt.error);
        loaded = std::move(*attempt);
        return Status::ok();
      });
  if (!loaded) {
    std::string why;
    for (const auto& [variant, error] : hooks.rejected) why += "; " + variant + " refused at load: " + error;
    for (const auto& c : hooks.choices)
      if (c.candidate.entry && !c.chosen) {
        why += "; " + c.candidate.program + ": " + c.reason;
        break;
      }
    return Best::fail({hooks.rejected.empty() ? FamilyReason::kernel_lacks_feature : FamilyReason::load_failed,
                       "no TCP capture variant loads on this kernel" + why + " (run `skewscope doctor`)"});
  }
  if (Status attached = loaded->attach(hooks.choices); !attached)
    return Best::fail({FamilyReason::load_failed, attached.error});
  loaded->refused_ = std::move(hooks.rejected);
  return Best::ok(std::move(loaded));
}

TcpSyscallCapture::Opened TcpSyscallCapture::load(const std::vector<HookChoice>& choices,
                                                  const PayloadSettings& payload, std::uint32_t send_slots) {
  collect_libbpf_messages();
  take_libbpf_messages();
  std::unique_ptr<TcpSyscallCapture> self(new TcpSyscallCapture());
  self->skel_ = tcp_syscalls__open();
  if (!self->skel_) {
    return Opened::fail("opening BPF object tcp_syscalls: " + take_libbpf_log());
  }
  // Every program starts unloaded; the table's choices switch theirs on. A program no candidate
  // names (the in-flight cleanup) keeps its default.
  for (const auto& choice : choices) bpf_program__set_autoload(choice.candidate.program_of(self->skel_), false);
  std::string first_reason;
  bool any_entry = false;
  for (const auto& choice : choices) {
    if (choice.chosen) bpf_program__set_autoload(choice.candidate.program_of(self->skel_), true);
    if (!choice.candidate.entry) continue;
    any_entry = any_entry || choice.chosen;
    if (!choice.chosen && first_reason.empty()) first_reason = choice.candidate.program + ": " + choice.reason;
  }
  if (!any_entry) {
    return Opened::fail("no TCP entry program can be used on this kernel (" + first_reason +
                        "; run `skewscope doctor`)");
  }
  self->variant_ = chosen_variant(choices);
  skip_maps_kernel_lacks(self->skel_->obj);
  self->skel_->rodata->agent_tgid = static_cast<__u32>(getpid());
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) {
    return Opened::fail("counting the possible CPUs (for one ring buffer each): " + std::string(std::strerror(-cpus)));
  }
  if (int err = bpf_map__set_max_entries(self->skel_->maps.send_slots, send_slots)) {
    return Opened::fail("sizing the send table: " + std::string(std::strerror(-err)));
  }
  self->skel_->rodata->send_slot_mask = send_slots - 1;
  const std::uint32_t ring_bytes = half_ring_bytes_per_cpu(static_cast<unsigned>(cpus));
  bpf_map__set_max_entries(self->skel_->maps.halves_by_cpu, static_cast<__u32>(cpus));
  self->skel_->rodata->ring_wakeup_mask = half_ring_wakeup_mask(ring_bytes, sizeof(skewscope_half_event));
  self->skel_->rodata->payload_max = payload.max_bytes;
  self->skel_->rodata->payload_detect = payload.detect ? 1 : 0;
  self->skel_->rodata->payload_scoped = payload.scoped ? 1 : 0;
  // Without payload capture the ring is one page: its 8 MiB default would be locked memory for nothing.
  const std::uint32_t payload_ring_bytes =
      payload.max_bytes > 0 ? payload.ring_bytes : static_cast<std::uint32_t>(getpagesize());
  self->skel_->rodata->payload_ring_bytes = payload_ring_bytes;
  // Each CPU wakes the reader once its silent records reach its share of an eighth of the ring.
  self->skel_->rodata->payload_wake_bytes =
      std::max<std::uint32_t>(4096, payload_ring_bytes / 8 / static_cast<std::uint32_t>(cpus));
  if (int err = bpf_map__set_max_entries(self->skel_->maps.payloads, payload_ring_bytes)) {
    return Opened::fail("sizing the payload ring buffer: " + std::string(std::strerror(-err)));
  }
  // The local ZMTP senders' table (bpf/lib/payload_mirror.bpf.h) is only read with payload capture
  // on: without it, one entry per CPU (an LRU's least) instead of 4096 preallocated.
  if (payload.max_bytes == 0)
    bpf_map__set_max_entries(self->skel_->maps.payload_mirror_senders, static_cast<__u32>(cpus));
  for (auto [map, slots] : {std::pair{self->skel_->maps.counters, std::uint32_t{SKEWSCOPE_CNT__COUNT}},
                            std::pair{self->skel_->maps.payload_counters, std::uint32_t{SKEWSCOPE_PCNT__COUNT}}}) {
    if (Status sized = CounterSlices::size_map(map, slots); !sized) return Opened::fail(sized.error);
  }

  if (int err = tcp_syscalls__load(self->skel_)) {
    const std::string said = take_libbpf_messages();
    return Opened::fail("loading the " + self->variant_ + " programs of tcp_syscalls: " +
                        (said.empty() ? std::string(std::strerror(-err)) : verdict_line(said)));
  }
  auto slices = CounterSlices::map(bpf_map__fd(self->skel_->maps.counters), SKEWSCOPE_CNT__COUNT);
  if (!slices) return Opened::fail(slices.error);
  self->counter_slices_.emplace(std::move(*slices));
  if (Status filled = fill_payload_ports(self->skel_->maps.payload_ports, payload); !filled) {
    return Opened::fail(filled.error);
  }
  if (Status s = fill_payload_scope(self->skel_->maps.payload_scope, payload); !s) {
    return Opened::fail(s.error);
  }
  // Before any program attaches: a half emitted on a CPU without its ring would be lost.
  if (Status made = self->create_rings(static_cast<unsigned>(cpus), ring_bytes); !made) {
    return Opened::fail(made.error);
  }
  return Opened::ok(std::move(self));
}

Status TcpSyscallCapture::attach(const std::vector<HookChoice>& choices) {
  TcpSyscallCapture* self = this;
  // Exits first: an entry attached before its exit could remember a call whose exit is never
  // seen. One program may serve several hooks (raw_tp): attached once.
  for (bool entries : {false, true}) {
    for (const auto& choice : choices) {
      if (!choice.chosen || choice.candidate.entry != entries) continue;
      if (std::find(self->attached_.begin(), self->attached_.end(), choice.candidate.program) != self->attached_.end())
        continue;
      bpf_link* link = bpf_program__attach(choice.candidate.program_of(self->skel_));
      if (!link) {
        return Status::fail("attaching BPF program " + choice.candidate.program + " to " + choice.candidate.tracepoint +
                            ": " + std::strerror(errno) + "\n" + take_libbpf_log());
      }
      self->links_.push_back(link);
      self->attached_.push_back(choice.candidate.program);
    }
  }
  // Without it the in-flight table would keep the entries of threads that died mid-call until it
  // is full (then counted, never silent, but permanent): required.
  bpf_link* cleanup = bpf_program__attach(self->skel_->progs.forget_exited_thread);
  if (!cleanup) {
    return Status::fail(std::string("attaching BPF program forget_exited_thread to sched/sched_process_exit: ") +
                        std::strerror(errno) + "\n" + take_libbpf_log());
  }
  self->links_.push_back(cleanup);
  self->attached_.push_back("forget_exited_thread");
  return Status::ok();
}

Status TcpSyscallCapture::create_rings(unsigned cpus, std::uint32_t bytes) {
  const int outer = bpf_map__fd(skel_->maps.halves_by_cpu);
  for (unsigned cpu = 0; cpu < cpus; ++cpu) {
    const int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "halves", 0, 0, bytes, nullptr);
    if (fd < 0)
      return Status::fail("creating the ring buffer of CPU " + std::to_string(cpu) + " (" + std::to_string(bytes) +
                          " bytes): " + std::strerror(errno));
    ring_fds_.push_back(fd);
    const __u32 key = cpu;
    if (bpf_map_update_elem(outer, &key, &fd, BPF_ANY) != 0)
      return Status::fail("placing the ring buffer of CPU " + std::to_string(cpu) + ": " + std::strerror(errno));
    if (!ring_)
      ring_ = ring_buffer__new(fd, &TcpSyscallCapture::on_record, this, nullptr);
    else if (ring_buffer__add(ring_, fd, &TcpSyscallCapture::on_record, this) != 0)
      ring_buffer__free(std::exchange(ring_, nullptr));
    if (!ring_) return Status::fail(std::string("creating the ring buffer reader: ") + std::strerror(errno));
  }
  auto wait = RingWait::attach(ring_buffer__epoll_fd(ring_));
  if (!wait) return Status::fail("the ring buffer reader: " + wait.error);
  wait_.emplace(std::move(*wait));
  idle_flag_ = ReaderIdleFlag(const_cast<std::uint32_t*>(&skel_->data_wake->halves_reader_idle));
  return Status::ok();
}

TcpSyscallCapture::~TcpSyscallCapture() {
  if (ring_) ring_buffer__free(ring_);
  for (int fd : ring_fds_) close(fd);  // the outer map holds its own references until destroyed
  // Each tracepoint detach waits in the kernel for RCU grace periods (tens of ms on a busy host).
  // Detached together they share those periods: shutdown is not one period per program long.
  std::vector<std::thread> detachers;
  for (bpf_link* link : links_) {
    try {
      detachers.emplace_back([link] { bpf_link__destroy(link); });
    } catch (const std::system_error&) {
      bpf_link__destroy(link);  // no thread to spare: detach it here
    }
  }
  for (auto& t : detachers) t.join();
  if (skel_) tcp_syscalls__destroy(skel_);
}

int TcpSyscallCapture::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<TcpSyscallCapture*>(ctx);
  return append_ring_record(*self->sink_, self->malformed_, data, size, kMaxBatch);
}

bool TcpSyscallCapture::poll(std::vector<skewscope_half_event>& out, std::chrono::milliseconds timeout) {
  // The wait ends at a forced wake-up or interrupt_wait(); the records submitted silently are
  // there all the same, hence the consume after it.
  int n = timeout.count() > 0 && out.size() < kMaxBatch ? -wait_->wait(timeout) : 0;
  if (n == 0) n = consume_ring_batch(ring_, sink_, out, kMaxBatch);
  if (n == 0) return true;
  error_ = std::string("reading the BPF ring buffer failed: ") + std::strerror(-n);
  return false;
}

int TcpSyscallCapture::payload_ring_fd() const { return bpf_map__fd(skel_->maps.payloads); }
int TcpSyscallCapture::payload_counters_fd() const { return bpf_map__fd(skel_->maps.payload_counters); }
std::uint32_t* TcpSyscallCapture::payload_idle_flag() const {
  return const_cast<std::uint32_t*>(&skel_->data_wake->payload_reader_idle);
}

SourceCounters TcpSyscallCapture::counters() const {
  std::lock_guard lock(counters_mutex_);
  SourceCounters c;
  c.malformed_records = malformed_.load(std::memory_order_relaxed);
  const std::array<std::uint64_t, SKEWSCOPE_CNT__COUNT> slots = read_counter_slots();
  c.emitted = slots[SKEWSCOPE_CNT_EMITTED];
  c.ringbuf_full = slots[SKEWSCOPE_CNT_RINGBUF_FULL];
  c.inflight_full = slots[SKEWSCOPE_CNT_INFLIGHT_FULL];
  c.mmsg_truncated = slots[SKEWSCOPE_CNT_MMSG_TRUNCATED];
  c.send_cut_short = slots[SKEWSCOPE_CNT_SEND_CUT_SHORT];
  c.send_slot_fallbacks = slots[SKEWSCOPE_CNT_SEND_SLOT_FALLBACK];
  // The origins only ever grow together with the global loss count, so the table (whose first
  // get_next_key scans every bucket of the map: tens of µs) is re-read only when that count moved
  // in this call or the one before (the kernel side bumps the global count a few instructions
  // before the origin's), and once a second whatever happens.
  const std::uint64_t losses = c.ringbuf_full + c.inflight_full;
  const auto now = std::chrono::steady_clock::now();
  const bool moved = losses != losses_seen_;
  if (moved || moved_before_ || now - origins_read_at_ >= std::chrono::seconds(1)) {
    read_origins();
    origins_read_at_ = now;
  }
  moved_before_ = moved;
  losses_seen_ = losses;
  c.lost_by_origin = origins_;
  return c;
}

std::array<std::uint64_t, SKEWSCOPE_CNT__COUNT> TcpSyscallCapture::read_counter_slots() const {
  std::array<std::uint64_t, SKEWSCOPE_CNT__COUNT> sums{};
  if (!counter_slices_) return sums;
  const std::vector<std::uint64_t> read = counter_slices_->sums();
  std::copy(read.begin(), read.end(), sums.begin());
  return sums;
}

void TcpSyscallCapture::read_origins() const {
  // A few entries (origins x 2 reasons), read whole; bounded by the map's size.
  origins_.clear();
  skewscope_loss_origin key{}, next{};
  const void* previous = nullptr;
  while (bpf_map__get_next_key(skel_->maps.lost_by_origin, previous, &next, sizeof next) == 0) {
    std::uint64_t count = 0;
    if (bpf_map__lookup_elem(skel_->maps.lost_by_origin, &next, sizeof next, &count, sizeof count, 0) == 0)
      origins_.push_back({next.netns_ino, next.cgroup_id, next.reason == SKEWSCOPE_CNT_RINGBUF_FULL, count});
    key = next;
    previous = &key;
  }
}

}  // namespace skewscope
