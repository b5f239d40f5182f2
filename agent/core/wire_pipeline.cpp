#include "core/wire_pipeline.hpp"

#include "capture/wire_decode.hpp"

namespace skewscope {

WirePipeline::WirePipeline(WirePipelineConfig config, const WireSetup& setup)
    : config_(std::move(config)), correlator_(config_.limits), levels_(config_.window_ns, config_.estimate) {
  counts_.enabled = true;
  counts_.send_path = setup.send_path;
  counts_.rx_timestamps_held = setup.rx_timestamps_held;
  for (const auto& i : setup.interfaces) {
    counts_.interfaces.push_back(i.shown);
    if (i.shown.phc_index >= 0) {
      phc_of_interface_[{i.netns_ino, i.ifindex}] = i.shown.phc_index;
      phc_by_index_.try_emplace(i.shown.phc_index);
    }
  }
}

void WirePipeline::add_phc_reading(int phc_index, const clocks::PhcReadingPoint& reading) {
  auto phc = phc_by_index_.find(phc_index);
  if (phc != phc_by_index_.end()) phc->second.add(reading);
}

std::optional<clocks::MappedStamp> WirePipeline::map_hardware(std::uint32_t netns_ino, std::uint32_t ifindex,
                                                              std::int64_t hardware_ns) const {
  auto phc = phc_of_interface_.find({netns_ino, ifindex});
  if (phc == phc_of_interface_.end()) return std::nullopt;
  return phc_by_index_.at(phc->second).map(hardware_ns);
}

void WirePipeline::ingest(const std::vector<skewscope_wire_event>& batch, const WireClocks& clocks,
                          std::optional<std::uint16_t> own_port, std::uint32_t own_netns) {
  spans_.clear();
  for (const auto& event : batch) {
    ++counts_.segments;
    WireDecoded decoded = decode_wire(event);
    if (!decoded) {
      ++counts_.rejected;
      continue;
    }
    WireHalf& w = *decoded;
    if (own_port && *own_port && w.netns_ino == own_netns &&
        (event.local_port == *own_port || event.remote_port == *own_port)) {
      ++counts_.own_traffic;
      continue;
    }
    // Wire halves are classified by their interface's network namespace only: an ingress segment
    // has no socket yet at tc, so a cgroup cannot be known for it (see docs/wire-timestamps.md).
    auto domain = clocks.domains.classify(w.netns_ino, 0);
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
    const std::int64_t real = w.skb_realtime_ns ? *w.skb_realtime_ns : clocks.mapping.to_realtime(w.half.capture_ns);
    software.domain_ns = clocks.simulated.apply(*domain, w.half.capture_ns, real);
    std::optional<Half> hardware;
    if (w.ack_sample) {
      correlator_.add_ack(software, spans_);
      continue;
    }
    if (w.hardware_only) {
      // sock_ops: the NIC's stamp of a byte whose software half came on its own.
      std::optional<clocks::MappedStamp> mapped;
      if (w.hardware_ns) mapped = map_hardware(w.netns_ino, w.ifindex, *w.hardware_ns);
      if (!mapped) {
        ++counts_.hw_unmapped;
        continue;
      }
      software.domain_ns = clocks.simulated.apply(*domain, w.half.capture_ns, mapped->system_ns);
      levels_.note_mapping_uncertainty(mapped->uncertainty_ns);
      correlator_.add_hardware_only(software, spans_);
      continue;
    }
    if (w.hardware_ns) {
      std::optional<clocks::MappedStamp> mapped = map_hardware(w.netns_ino, w.ifindex, *w.hardware_ns);
      if (mapped) {
        hardware = software;
        hardware->domain_ns = clocks.simulated.apply(*domain, w.half.capture_ns, mapped->system_ns);
        levels_.note_mapping_uncertainty(mapped->uncertainty_ns);
      } else {
        ++counts_.hw_unmapped;  // a stamp with no PHC reading to map it: software level only
      }
    }
    correlator_.add(software, hardware, spans_);
  }
  for (const Span& span : spans_) levels_.add(span);
}

void WirePipeline::observe_source(std::int64_t now_ns, const WireCounters& counters) {
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
  if (lost > losses_seen_) levels_.add_losses(now_ns, lost - losses_seen_);
  losses_seen_ = lost;
}

void WirePipeline::tick(std::int64_t now_ns) {
  if (now_ns - last_expire_ns_ >= 100'000'000) {
    correlator_.expire(now_ns);
    last_expire_ns_ = now_ns;
  }
  if (now_ns - last_estimate_ns_ >= 1'000'000'000) {
    levels_.tick(now_ns);
    last_estimate_ns_ = now_ns;
  }
}

void WirePipeline::mark_down(std::string error) { error_ = std::move(error); }

void WirePipeline::fill(WireReport& r, std::int64_t now_ns, bool capture_up) const {
  r = counts_;
  if (error_) r.error = *error_;
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
  r.software = level_counts(correlator_.level(TimestampSource::wire_software));
  r.hardware = level_counts(correlator_.level(TimestampSource::wire_hardware));
  r.ack_samples = config_.ack_samples;
  r.acks = level_counts(correlator_.acks());
  r.pairs = levels_.report(now_ns, capture_up && !error_);
}

}  // namespace skewscope
