#include "runtime/wire_runtime.hpp"

#include <linux/net_tstamp.h>
#include <time.h>

#include <algorithm>
#include <iostream>

#include "capture/clock_mapping.hpp"
#include "clocks/phc.hpp"
#include "clocks/phc_mapping.hpp"
#include "runtime/ring_drain.hpp"

namespace skewscope {

namespace {
std::int64_t realtime_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
constexpr std::uint32_t kHardwareStamps = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE;
}  // namespace

Result<WireStart> WireRuntime::start(WireRuntimeConfig config, SharedCore& core, const KernelFeatures& features) {
  std::unique_ptr<WireRuntime> self(new WireRuntime(core));
  auto opened = WireCapture::open(config.capture, features);
  if (!opened) return Result<WireStart>::fail(opened.error);
  WireStart started{nullptr, opened->wire, opened->send};
  if (!opened->capture) return Result<WireStart>::ok(std::move(started));
  self->capture_ = std::move(opened->capture);
  WireSetup setup;
  setup.send_path = self->capture_->send_path();
  setup.rx_timestamps_held = self->capture_->rx_timestamps_held();
  for (const auto& a : self->capture_->attachments()) {
    setup.interfaces.push_back(
        {{a.iface.label(), a.created_qdisc, a.phc_index, (a.so_timestamping & kHardwareStamps) == kHardwareStamps},
         a.netns_ino,
         static_cast<std::uint32_t>(a.ifindex)});
    if (a.phc_index >= 0 && std::find(self->phcs_.begin(), self->phcs_.end(), a.phc_index) == self->phcs_.end())
      self->phcs_.push_back(a.phc_index);
  }
  std::sort(self->phcs_.begin(), self->phcs_.end());  // read in index order, as before
  config.pipeline.ack_samples = config.capture.ack_samples;
  core.lock()->enable_wire(std::move(config.pipeline), setup);
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
  for (int index : phcs_) {
    const std::int64_t before = realtime_now_ns();
    clocks::PhcReading reading = clocks::read_phc("ptp" + std::to_string(index));
    const std::int64_t after = realtime_now_ns();
    if (!reading.offset) continue;
    core_.lock()->add_phc_reading(index, clocks::reading_from(*reading.offset, before + (after - before) / 2));
  }
}

void WireRuntime::run() {
  PolledRing<WireCapture, skewscope_wire_event> ring(*capture_);
  std::int64_t last_phc = 0;
  auto take = [&](const std::vector<skewscope_wire_event>& batch, const Status& polled) {
    if (!polled) return;  // a failed pass is not taken: the wire levels go down (below)
    const WireCounters counters = capture_->counters();
    std::int64_t now = monotonic_now_ns();
    if (!phcs_.empty() && now - last_phc >= 1'000'000'000) {
      read_phcs();
      last_phc = now;
    }
    auto core = core_.lock();
    core->ingest_wire(batch);
    core->observe_wire_source(now, counters);
    core->tick_wire(now);
  };
  Status end = drain_ring(ring, WireCapture::kMaxBatch, kBusyWait, stopping_, take);  // no idle wake-up: busy pace
  if (end) return;
  std::cerr << "skewscope agent: wire capture failed: " << end.error << std::endl;
  core_.lock()->mark_wire_down(end.error);
}

}  // namespace skewscope
