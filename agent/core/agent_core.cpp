#include "core/agent_core.hpp"

#include "core/report_diagnosis.hpp"

#include <algorithm>
#include <cstring>

#include "estimate/triangles.hpp"
#include "skewscope/saturating.hpp"

namespace skewscope {

AgentCore::AgentCore(DomainRegistry domains, AgentCoreConfig config)
    : captured_addresses_(config.window_ns),
      pairing_window_(config.window_ns, 1'000'000'000, config.pairing_floor),
      domains_(std::move(domains)),
      config_(config),
      correlator_(config.limits),
      health_(config.window_ns),
      estimator_([&] {
        estimate::Config c;
        c.window_ns = config.window_ns;
        c.at_risk_share = config.at_risk_share;
        return c;
      }()),
      diagnosis_history_([&] {
        diagnose::Config c;
        c.estimate_interval_ns = config.estimate_interval_ns;
        return c;
      }()) {}

bool AgentCore::is_own_traffic(const skewscope_half_event& e) const {
  return own_port_ && e.netns_ino == own_netns_ && (e.local_port == *own_port_ || e.remote_port == *own_port_);
}

void AgentCore::ingest(const std::vector<skewscope_half_event>& batch) {
  spans_.clear();
  span_flows_.clear();
  ingest_.records += batch.size();
  for (const auto& event : batch) {
    if (is_own_traffic(event)) {
      ++ingest_.own_traffic;
      continue;
    }
    Decoded decoded = decode_half(event);
    if (!decoded) {
      ++ingest_.rejected[static_cast<std::size_t>(decoded.error)];
      // A half that moved bytes but cannot be keyed (no port: a socket with no tuple left, or a
      // malformed record) is lost to pairing, and its other end will go unpaired: the window is
      // not complete. A zero-byte one moved nothing.
      if (decoded.error != DecodeReject::zero_bytes) health_.add_losses(static_cast<std::int64_t>(event.ts_ns), 1);
      continue;
    }
    auto domain = domains_.classify(event.netns_ino, event.cgroup_id);
    if (!domain) {
      ++ingest_.outside_domains;
      continue;
    }
    Half& half = *decoded;
    half.domain = *domain;
    half.domain_ns = simulated_.apply(half.domain, half.capture_ns, clock_mapping_.to_realtime(half.capture_ns));
    (half.kind == HalfKind::send ? ingest_.sends : ingest_.recvs) += 1;
    learn_local_address(half);
    if (nat_) nat_->translate(half.flow);
    // Its bytes were not copied: the sender's copy here names its messages (after this pass).
    if ((event.flags & SKEWSCOPE_HALF_PAYLOAD_MIRRORED) && messages_)
      mirrored_.push_back({half, (event.flags & SKEWSCOPE_HALF_PAYLOAD_MIRROR_FIRST) != 0});
    if (exchange_ && exchange_->divert(half, half.domain_ns - clock_mapping_.to_realtime(half.capture_ns))) continue;
    correlator_.add(half, spans_);
    // Every span a half completes is of that half's flow: kept beside it for the recent spans.
    while (span_flows_.size() < spans_.size()) span_flows_.push_back(half.flow);
  }
  pairing_window_.add_paired(spans_);  // every span here is the local correlator's
  record_spans(nullptr);
  if (!mirrored_.empty()) pair_mirrored_receives();
}

void AgentCore::pair_mirrored_receives() {
  spans_.clear();
  span_info_.clear();
  const MessagePairing::ToDomainClock clock = message_clock();
  for (const auto& [half, first] : mirrored_) messages_->add_mirrored_receive(half, first, clock, spans_, span_info_);
  mirrored_.clear();
  record_spans(&span_info_);
}

void AgentCore::learn_local_address(const Half& half) {
  captured_addresses_.learn(half.kind == HalfKind::send ? half.flow.src_addr : half.flow.dst_addr, half.capture_ns);
}

void AgentCore::count_unpaired(std::int64_t now_ns) {
  // Only a half whose other end is captured could have paired: one whose peer has no agent (or
  // is outside every domain) says nothing about the capture; nor does a loopback peer.
  for (const UnpairedHalf& u : unpaired_)
    if (!is_loopback(u.peer) && captured_addresses_.captured(u.peer, now_ns))
      pairing_window_.add_unpaired(u.domain, now_ns);
  unpaired_.clear();
  captured_addresses_.expire(now_ns);
}

void AgentCore::record_spans(const std::vector<MessageSpanInfo>* info) {
  // Both ends' bounds: every domain here shares the host's clock sources.
  std::optional<std::int64_t> pair_bound;
  if (clock_bound_ns_) pair_bound = sat_mul(2, *clock_bound_ns_);
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    const Span& span = spans_[i];
    health_.add(span, pair_bound);
    estimator_.observe(span);
    const MessageSpanInfo* message = info && i < info->size() ? &(*info)[i] : nullptr;
    push_recent(span, message, !info && i < span_flows_.size() ? &span_flows_[i] : nullptr);
  }
  span_flows_.clear();
}

void AgentCore::push_recent(const Span& span, const MessageSpanInfo* message, const FlowKey* flow) {
  // Written into the ring's oldest slot: a RecentSpan built and moved in was zeroed and copied
  // whole per span (the zeroing alone was a third of record_spans' samples, which were a tenth of
  // the agent's per TCP message).
  RecentSpan& recent = recent_.push_slot();
  recent.span = span;
  if (message) {
    recent.topic = message->topic;
  } else {
    recent.topic.clear();
  }
  recent.partition = message ? message->partition : -1;
  recent.records = message ? message->records : 0;
  if (message && span.transport == Transport::kafka && message->consumer_socket.dst_port != 0) {
    recent.socket = message->consumer_socket;
  } else if (flow) {
    recent.socket = *flow;
  } else {
    recent.socket.reset();
  }
}

void AgentCore::enable_payload(std::uint32_t max_bytes, MessagePairingLimits limits) {
  messages_.emplace(limits);
  if (exchange_) exchange_message_halves();
  payload_.emplace();
  payload_->max_bytes = max_bytes;
}

void AgentCore::ingest_payloads(const std::vector<PayloadRecord>& batch) {
  if (!messages_) return;
  spans_.clear();
  span_info_.clear();
  payload_->records += batch.size();
  const MessagePairing::ToDomainClock clock = message_clock();
  for (const auto& record : batch) {
    DecodedPayload decoded = decode_payload(record);
    if (!decoded) {
      ++payload_->rejected[static_cast<std::size_t>(decoded.error)];
      continue;
    }
    auto domain = domains_.classify(decoded->netns_ino, decoded->cgroup_id);
    if (!domain) {
      ++payload_->outside_domains;
      continue;
    }
    decoded->half.domain = *domain;
    if (nat_) nat_->translate(decoded->half.flow);
    messages_->add(*decoded, clock, spans_, span_info_);
    ship_kafka_halves();
  }
  record_spans(&span_info_);
}

void AgentCore::ship_kafka_halves() {
  if (!exchange_) return;
  messages_->take_shipped(shipped_);
  for (const ShippedKafkaHalf& s : shipped_) {
    const std::int64_t clock_error = s.domain_ns - clock_mapping_.to_realtime(s.capture_ns);
    exchange_->ship_message({exchange::to_wire(s.batch, s.domain, s.domain_ns, s.socket), s.capture_ns, clock_error});
  }
}

void AgentCore::observe_payload_source(const PayloadCounters& counters) {
  if (payload_) payload_->source = counters;
}

MessagePairing::ToDomainClock AgentCore::message_clock() {
  return [this](DomainId domain, std::int64_t capture_ns) {
    return simulated_.apply(domain, capture_ns, clock_mapping_.to_realtime(capture_ns));
  };
}

void AgentCore::tick(std::int64_t now_ns) {
  correlator_.expire(now_ns, &unpaired_);
  count_unpaired(now_ns);
  if (messages_) {
    // Messages of chunks a ZMTP stream held past their bound may complete spans here.
    spans_.clear();
    span_info_.clear();
    messages_->expire(now_ns, message_clock(), spans_, span_info_);
    if (!spans_.empty()) record_spans(&span_info_);
    ship_kafka_halves();  // fetched halves whose grace ended (exchange)
  }
  rdma_.expire(now_ns);
  if (nat_) nat_->expire(now_ns);
  // The estimator's evaluation costs tens of microseconds per pair (--estimate-interval).
  const bool estimate = now_ns - last_estimate_tick_ns_ >= config_.estimate_interval_ns;
  if (estimate) {
    estimator_.tick(now_ns);
    last_estimate_tick_ns_ = now_ns;
  }
  if (exchange_) exchange_->pairing().tick(now_ns, estimate);
  if (estimate) record_diagnosis_history(now_ns);
}

void AgentCore::record_diagnosis_history(std::int64_t now_ns) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < domains_.size(); ++i) names.push_back(domains_.name(static_cast<DomainId>(i)));
  record_estimates(diagnosis_history_, estimator_.estimates(), names, now_ns);
  if (exchange_) record_estimates(diagnosis_history_, exchange_->pairing().results(now_ns).estimates, names, now_ns);
}

void AgentCore::observe_source(std::int64_t now_ns, const SourceCounters& counters) {
  source_ = counters;
  const std::uint64_t lost = lost_halves(source_, correlator_.counters());
  if (lost > lost_seen_) health_.add_losses(now_ns, lost - lost_seen_);
  lost_seen_ = lost;
}

void AgentCore::mark_capture_down(std::string reason) {
  capture_error_ = std::move(reason);
  health_.set_capture_down();
}

void AgentCore::enable_wire(WirePipelineConfig config, const WireSetup& setup) {
  wire_.emplace(std::move(config), setup);
}

void AgentCore::ingest_wire(const std::vector<skewscope_wire_event>& batch) {
  if (wire_) wire_->ingest(batch, WireClocks{domains_, simulated_, clock_mapping_}, own_port_, own_netns_);
}

void AgentCore::observe_wire_source(std::int64_t now_ns, const WireCounters& counters) {
  if (wire_) wire_->observe_source(now_ns, counters);
}

void AgentCore::tick_wire(std::int64_t now_ns) {
  if (wire_) wire_->tick(now_ns);
}

void AgentCore::add_phc_reading(int phc_index, const clocks::PhcReadingPoint& reading) {
  if (wire_) wire_->add_phc_reading(phc_index, reading);
}

void AgentCore::mark_wire_down(std::string error) {
  if (wire_) wire_->mark_down(std::move(error));
}

bool AgentCore::pair_at_risk(DomainId src, DomainId dst) const {
  auto e = estimator_.estimate(src, dst);
  if (!e) return false;
  if (e->at_risk) return true;
  // The clock sources' own claim: two hosts each within ±bound can be 2·bound apart, which
  // inverts messages faster than Δt_min even before any inversion is seen.
  return clock_bound_ns_ && e->dt_min_ns && 2.0 * static_cast<double>(*clock_bound_ns_) >= *e->dt_min_ns;
}

AgentReport AgentCore::report(std::int64_t now_ns, const SourceCounters& source) const {
  AgentReport r;
  r.health = health_.report(
      now_ns, [this](const PairKey& k) { return pair_at_risk(k.src, k.dst); }, pairing_window_.report(now_ns));
  r.pairing_floor = pairing_window_.floor();
  r.captured_addresses = captured_addresses_.size();
  r.addresses_not_learned = captured_addresses_.not_learned();
  r.estimates = estimator_.estimates();
  r.estimate_counters = estimator_.counters();
  r.triangles = estimate::check_triangles(r.estimates);
  for (std::size_t i = 0; i < domains_.size(); ++i) r.domain_names.push_back(domains_.name(static_cast<DomainId>(i)));
  r.source = source;
  r.realtime_mapping = clock_mapping_.stats();
  if (clock_step_watch_) r.clock_steps_watched = clock_steps_watched_;
  for (const auto& origin : source.lost_by_origin) {
    auto domain = domains_.classify(origin.netns_ino, origin.cgroup_id);
    auto same = [&](const DomainLoss& l) {
      return l.domain == domain && l.ring_buffer_full == origin.ring_buffer_full;
    };
    auto it = std::find_if(r.domain_losses.begin(), r.domain_losses.end(), same);
    if (it == r.domain_losses.end())
      it = r.domain_losses.insert(r.domain_losses.end(), {domain, origin.ring_buffer_full, 0});
    it->count += origin.count;
  }
  r.capture_error = capture_error_;
  if (payload_) {
    r.payload = *payload_;
    r.payload->pairing = messages_->counters();
    r.payload->pending = messages_->pending();
  }
  if (rdma_source_)
    r.rdma = RdmaReport{*rdma_source_,         rdma_.counters(),      rdma_outside_domains_,
                        rdma_.pending_sends(), rdma_.pending_recvs(), std::nullopt};  // the exchange's part: below
  if (r.rdma && exchange_)
    r.rdma->exchange =
        RdmaReport::Exchange{exchange_->rdma_shipped(), rdma_no_local_gid_, exchange_->pairing().rdma_counters()};
  if (nat_) r.nat = NatReport{nat_watch_, nat_->counters(), nat_->mappings()};
  r.ingest = ingest_;
  r.correlator = correlator_.counters();
  r.pending_sends = correlator_.pending_sends();
  r.pending_recvs = correlator_.pending_recvs();
  for (std::size_t i = 0; i < domains_.size(); ++i) {
    const auto& sim = simulated_.setting(static_cast<DomainId>(i));
    DomainClock clock;
    clock.error_bound_ns = clock_bound_ns_;
    if (sim.active) {
      clock.simulated_offset_ns = simulated_.error_ns(static_cast<DomainId>(i), now_ns);
      clock.simulated_drift_ppm = sim.drift_ppm;
    }
    r.domain_clocks.push_back(clock);
  }
  if (exchange_) {
    add_remote_results(r, exchange_->pairing().results(now_ns));
    r.exchange.emplace();
    exchange_->fill(*r.exchange);
    r.exchange->remote_domains = domains_.remote_count();
  }
  // Last, once every pair (local and through the exchange) is in: the headline of each pair and
  // the overall health come from the best timestamp level that paired its traffic.
  if (wire_) {
    wire_->fill(r.wire, now_ns, r.health.capture_up);
    apply_best_levels(r.health, r.wire.pairs);
  }
  return r;
}

void AgentCore::enable_nat(translate::NatLimits limits) {
  nat_.emplace(limits);
  keep_learnt_translations();
}

void AgentCore::observe_conntrack(const std::vector<translate::ConntrackEntry>& entries, std::int64_t now_ns,
                                  const translate::ConntrackWatchReport& watch) {
  if (!nat_) return;
  for (const auto& entry : entries) nat_->observe(entry, now_ns);
  nat_watch_ = watch;
  ship_learnt_translations();
}

void AgentCore::enable_exchange(exchange::CoreExchangeConfig config) {
  estimate::Config c = estimator_.config();
  exchange_.emplace(config, exchange::RemotePairing(config_.limits, config_.window_ns, c, exchange::kMaxRemoteDomains,
                                                    config_.pairing_floor));
  keep_learnt_translations();
  if (messages_) exchange_message_halves();
}

// Kafka batch halves are shipped by topic-partition; a ZMTP message half leaves like a TCP half
// (not local, sampled in), keyed by its host pair, and is paired by that pair's owner.
void AgentCore::exchange_message_halves() {
  messages_->ship_kafka_halves(true);
  messages_->divert_zmtp_halves([this](const Half& half) {
    return exchange_->divert(half, half.domain_ns - clock_mapping_.to_realtime(half.capture_ns));
  });
}

void AgentCore::set_owned_addresses(std::set<Address> addresses) {
  if (exchange_) exchange_->set_owned(std::move(addresses));
}

void AgentCore::take_outgoing(std::vector<exchange::OutgoingHalf>& out) {
  if (exchange_) {
    exchange_->take_outgoing(out);
  } else {
    out.clear();
  }
}

void AgentCore::ingest_remote(std::int32_t partition, const exchange::WireBatch& batch, std::int64_t now_ns) {
  if (!exchange_) return;
  const std::int64_t realtime_minus_mono = clock_mapping_.to_realtime(now_ns) - now_ns;
  exchange_->pairing().ingest(partition, batch, now_ns, realtime_minus_mono, domains_);
  if (!batch.messages.empty()) record_remote_message_spans();
}

void AgentCore::record_remote_message_spans() {
  // Already in the partition's health and estimator; here only for the recent spans and topics.
  std::vector<Span> spans;
  std::vector<MessageSpanInfo> info;
  exchange_->pairing().take_message_spans(spans, info);
  for (std::size_t i = 0; i < spans.size(); ++i) push_recent(spans[i], i < info.size() ? &info[i] : nullptr, nullptr);
}

void AgentCore::take_outgoing_messages(std::vector<exchange::OutgoingMessageHalf>& out) {
  if (exchange_) {
    exchange_->take_outgoing_messages(out);
  } else {
    out.clear();
  }
}

void AgentCore::assign_partitions(const std::vector<std::int32_t>& partitions, std::int64_t now_ns) {
  if (exchange_) exchange_->pairing().assign(partitions, now_ns);
}

void AgentCore::revoke_partitions(const std::vector<std::int32_t>& partitions) {
  if (exchange_) exchange_->pairing().revoke(partitions);
}

void AgentCore::note_partition_gap(std::int32_t partition, std::uint64_t records, std::int64_t now_ns) {
  if (exchange_) exchange_->pairing().note_gap(partition, records, now_ns);
}

}  // namespace skewscope
