#include "runtime/wire_runtime.hpp"

#include <linux/net_tstamp.h>
#include <time.h>

#include <iostream>

#include "capture/clock_mapping.hpp"

namespace skewscope {

namespace {
std::int64_t realtime_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
constexpr std::uint32_t kHardwareStamps = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE;
}  // namespace

WireRuntime::WireRuntime(WireRuntimeConfig config, AgentCore& core, std::mutex& core_lock)
    : config_(std::move(config)),
      core_(core),
      core_lock_(core_lock),
      correlator_(config_.limits),
      levels_(config_.window_ns, config_.estimate) {}

Result<WireStart> WireRuntime::start(WireRuntimeConfig config, AgentCore& core, std::mutex& core_lock,
                                     const KernelFeatures& features) {
  std::unique_ptr<WireRuntime> self(new WireRuntime(std::move(config), core, core_lock));
  auto opened = WireCapture::open(self->config_.capture, features);
  if (!opened) return Result<WireStart>::fail(opened.error);
  WireStart started{nullptr, opened->wire, opened->send};
  if (!opened->capture) return Result<WireStart>::ok(std::move(started));
  self->capture_ = std::move(opened->capture);
  self->counts_.enabled = true;
  self->counts_.send_path = self->capture_->send_path();
  self->counts_.rx_timestamps_held = self->capture_->rx_timestamps_held();
  for (const auto& a : self->capture_->attachments()) {
    self->counts_.interfaces.push_back(
        {a.iface.label(), a.created_qdisc, a.phc_index, (a.so_timestamping & kHardwareStamps) == kHardwareStamps});
    if (a.phc_index >= 0) {
      self->phc_of_interface_[{a.netns_ino, static_cast<std::uint32_t>(a.ifindex)}] = a.phc_index;
      self->phc_by_index_.try_emplace(a.phc_index);
    }
  }
  self->thread_ = std::thread([raw = self.get()] { raw->run(); });
  started.runtime = std::move(self);
  return Result<WireStart>::ok(std::move(started));
}

WireRuntime::~WireRuntime() { stop(); }

void WireRuntime::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  capture_.reset();  // detaches the filters, removes the qdiscs it created, gives back the key
}

void WireRuntime::read_phcs() {
  for (auto& [index, mapping] : phc_by_index_) {
    const std::int64_t before = realtime_now_ns();
    clocks::PhcReading reading = clocks::read_phc("ptp" + std::to_string(index));
    const std::int64_t after = realtime_now_ns();
    if (!reading.offset) continue;
    std::lock_guard guard(core_lock_);
    mapping.add(clocks::reading_from(*reading.offset, before + (after - before) / 2));
  }
}

void WireRuntime::run() {
  std::vector<skewscope_wire_event> batch;
  std::int64_t last_tick = 0, last_estimate = 0, last_phc = 0;
  bool behind = false;
  while (!stopping_) {
    batch.clear();
    if (!capture_->poll(batch, std::chrono::milliseconds(behind ? 0 : 20))) {
      std::cerr << "skewscope agent: wire capture failed: " << capture_->error() << std::endl;
      std::lock_guard guard(core_lock_);
      failed_ = true;
      error_ = capture_->error();
      return;
    }
    behind = batch.size() >= WireCapture::kMaxBatch;
    const WireCounters counters = capture_->counters();
    std::int64_t now = monotonic_now_ns();
    if (!phc_by_index_.empty() && now - last_phc >= 1'000'000'000) {
      read_phcs();
      last_phc = now;
    }
    std::lock_guard guard(core_lock_);
    ingest(batch);
    counts_.ring_buffer_full = counters.ringbuf_full;
    counts_.not_parsed = counters.not_parsed;
    counts_.malformed_records = counters.malformed_records;
    counts_.rx_skb_stamped = counters.rx_skb_stamped;
    counts_.rx_unstamped = counters.rx_unstamped;
    counts_.hw_stamped = counters.hw_stamped;
    // Wire halves lost mark the wire levels' windows incomplete, as syscall losses do theirs.
    const std::uint64_t lost = counters.ringbuf_full + counters.malformed_records +
                               correlator_.level(TimestampSource::wire_software).counters().dropped_table_full +
                               correlator_.acks().counters().dropped_table_full;
    if (lost > losses_seen_) levels_.add_losses(now, lost - losses_seen_);
    losses_seen_ = lost;
    if (now - last_tick >= 100'000'000) {
      correlator_.expire(now);
      last_tick = now;
    }
    if (now - last_estimate >= 1'000'000'000) {
      levels_.tick(now);
      last_estimate = now;
    }
  }
}

void WireRuntime::ingest(const std::vector<skewscope_wire_event>& batch) {
  std::vector<Span> spans;
  const DomainRegistry& domains = core_.domains();
  const SimulatedClocks& simulated = core_.simulated_clocks();
  const MonotonicToRealtime& mapping = core_.clock_mapping();
  for (const auto& event : batch) {
    ++counts_.segments;
    WireDecoded decoded = decode_wire(event);
    if (!decoded) {
      ++counts_.rejected;
      continue;
    }
    WireHalf& w = *decoded;
    if (config_.own_port && w.netns_ino == config_.own_netns &&
        (event.local_port == config_.own_port || event.remote_port == config_.own_port)) {
      ++counts_.own_traffic;
      continue;
    }
    // Wire halves are classified by their interface's network namespace only: an ingress segment
    // has no socket yet at tc, so a cgroup cannot be known for it (see docs/wire-timestamps.md).
    auto domain = domains.classify(w.netns_ino, 0);
    if (!domain) {
      ++counts_.outside_domains;
      continue;
    }
    // Time bases. The tc program's own stamp (capture_ns) is CLOCK_MONOTONIC, like the syscall
    // halves' stamps, and goes through the same MONOTONIC -> REALTIME mapping, sampled by the
    // capture thread. The kernel's receive stamp (skb->tstamp, taken with ktime_get_real) is
    // CLOCK_REALTIME already: it is used as it is. Both clocks tick at the same rate (NTP slews
    // both), so a span from one to the other is exact up to the mapping's read jitter (tens of
    // ns) and a clock step between the mapping's samples. The simulated error is then applied at
    // the true time capture_ns, exactly as for syscall halves.
    Half software = w.half;
    software.domain = *domain;
    const std::int64_t real = w.skb_realtime_ns ? *w.skb_realtime_ns : mapping.to_realtime(w.half.capture_ns);
    software.domain_ns = simulated.apply(*domain, w.half.capture_ns, real);
    std::optional<Half> hardware;
    if (w.ack_sample) {
      correlator_.add_ack(software, spans);
      continue;
    }
    if (w.hardware_only) {
      // sock_ops: the NIC's stamp of a byte whose software half came on its own.
      auto phc = phc_of_interface_.find({w.netns_ino, w.ifindex});
      std::optional<clocks::MappedStamp> mapped;
      if (w.hardware_ns && phc != phc_of_interface_.end()) mapped = phc_by_index_.at(phc->second).map(*w.hardware_ns);
      if (!mapped) {
        ++counts_.hw_unmapped;
        continue;
      }
      software.domain_ns = simulated.apply(*domain, w.half.capture_ns, mapped->system_ns);
      levels_.note_mapping_uncertainty(mapped->uncertainty_ns);
      correlator_.add_hardware_only(software, spans);
      continue;
    }
    if (w.hardware_ns) {
      auto phc = phc_of_interface_.find({w.netns_ino, w.ifindex});
      std::optional<clocks::MappedStamp> mapped;
      if (phc != phc_of_interface_.end()) mapped = phc_by_index_.at(phc->second).map(*w.hardware_ns);
      if (mapped) {
        hardware = software;
        hardware->domain_ns = simulated.apply(*domain, w.half.capture_ns, mapped->system_ns);
        levels_.note_mapping_uncertainty(mapped->uncertainty_ns);
      } else {
        ++counts_.hw_unmapped;  // a stamp with no PHC reading to map it: software level only
      }
    }
    correlator_.add(software, hardware, spans);
  }
  for (const Span& span : spans) levels_.add(span);
}

void WireRuntime::fill(AgentReport& r, std::int64_t now_ns) const {
  r.wire = counts_;
  if (failed_) r.wire.error = error_;
  auto level_counts = [](const Correlator& c) {
    WireLevelCounters out;
    out.pairs = c.counters().pairs;
    out.sends = c.counters().sends;
    out.recvs = c.counters().recvs;
    out.sends_expired = c.counters().sends_expired;
    out.dropped_table_full = c.counters().dropped_table_full;
    out.pending = c.pending_sends() + c.pending_recvs();
    return out;
  };
  r.wire.software = level_counts(correlator_.level(TimestampSource::wire_software));
  r.wire.hardware = level_counts(correlator_.level(TimestampSource::wire_hardware));
  r.wire.ack_samples = config_.capture.ack_samples;
  r.wire.acks = level_counts(correlator_.acks());
  r.wire.pairs = levels_.report(now_ns, r.health.capture_up && !failed_);
  apply_best_levels(r.health, r.wire.pairs);
}

}  // namespace skewscope
