#include "exchange/remote_pairing.hpp"

#include "exchange/flow_keys.hpp"
#include "exchange/message_record_codec.hpp"

#include <algorithm>

namespace skewscope::exchange {

RemotePairing::RemotePairing(CorrelatorLimits limits, std::int64_t window_ns, estimate::Config estimate_config,
                             std::size_t max_remote_domains, PairingFloor floor)
    : limits_(limits),
      window_ns_(window_ns),
      estimate_config_(estimate_config),
      max_remote_domains_(max_remote_domains),
      pairing_window_(window_ns, 1'000'000'000, floor),
      captured_addresses_(window_ns) {}

void RemotePairing::assign(const std::vector<std::int32_t>& partitions, std::int64_t now_ns) {
  for (auto p : partitions) {
    auto [it, inserted] = partitions_.try_emplace(p, limits_, window_ns_, estimate_config_);
    if (inserted) it->second.owned_since_ns = now_ns;
  }
}

void RemotePairing::revoke(const std::vector<std::int32_t>& partitions) {
  for (auto p : partitions) {
    auto it = partitions_.find(p);
    if (it == partitions_.end()) continue;
    // Halves still waiting for their other half will find it on the new owner, not here.
    dropped_[static_cast<std::size_t>(DropReason::partition_revoked)] +=
        it->second.correlator.pending_sends() + it->second.correlator.pending_recvs();
    unpaired_sends_revoked_ += it->second.correlator.counters().sends_expired;
    revoke_rdma(it->second);
    dropped_[static_cast<std::size_t>(DropReason::partition_revoked)] += it->second.kafka.pending();
    add_kafka_counters(kafka_revoked_, it->second.kafka.counters());
    dropped_[static_cast<std::size_t>(DropReason::partition_revoked)] += it->second.zmtp.pending();
    add_zmtp_counters(zmtp_revoked_, it->second.zmtp.counters());
    partitions_.erase(it);
  }
}

std::vector<std::int32_t> RemotePairing::owned() const {
  std::vector<std::int32_t> out;
  for (const auto& [p, _] : partitions_) out.push_back(p);
  return out;
}

std::optional<std::int64_t> RemotePairing::pair_bound(DomainId src, DomainId dst) const {
  auto a = domain_bound_ns_.find(src), b = domain_bound_ns_.find(dst);
  if (a == domain_bound_ns_.end() || b == domain_bound_ns_.end()) return std::nullopt;
  return a->second + b->second;
}

void RemotePairing::ingest(std::int32_t partition, const WireBatch& batch, std::int64_t now_ns,
                           std::int64_t realtime_minus_mono_ns, DomainRegistry& domains) {
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    // Fetched just before its partition was revoked: its halves are the new owner's to pair (it
    // reads from the last committed offset), not this agent's; counted as the revoked ones are.
    dropped_[static_cast<std::size_t>(DropReason::partition_revoked)] +=
        batch.halves.size() + batch.rdma_halves.size() + batch.messages.size();
    return;
  }
  Partition& part = it->second;
  ++records_consumed_;
  if (batch.dropped_before > 0) part.last_loss_ns = now_ns;

  batch_domains_.clear();
  for (const auto& name : batch.domains) {
    auto id = domains.intern_remote(name, max_remote_domains_);
    batch_domains_.push_back(id ? *id : DomainId{0xffff});
    if (id && batch.clock_error_bound_ns > 0) domain_bound_ns_[*id] = batch.clock_error_bound_ns;
  }
  spans_.clear();
  learn_translations(part, batch, now_ns, domains);
  for (const WireHalf& w : batch.halves) {
    const std::optional<DomainId> known = consume_domain(part, w.domain, now_ns);
    if (!known) continue;
    const DomainId domain = *known;
    Half h;
    h.kind = w.kind;
    h.transport = w.transport;
    h.flow = w.flow;
    h.seq = w.seq;
    h.bytes = w.bytes;
    h.capture_ns = now_ns;  // ages by arrival on this host: the sender's monotonic clock means nothing here
    h.domain_ns = w.realtime_ns;
    h.domain = domain;
    if (!batch.forwarded && forward_if_translated(h, domains)) continue;
    if (w.transport == Transport::zmtp) {  // one ZeroMQ message: its exact key, not byte ranges
      part.zmtp.add(h.kind, h.flow, h.seq, ZmtpMessageEnd{domain, now_ns, w.realtime_ns, w.bytes},
                    part.zmtp.pending() < limits_.max_pending, spans_);
      continue;
    }
    learn_captured(h);
    const std::size_t before = spans_.size();
    part.correlator.add(h, spans_);
    for (std::size_t i = before; i < spans_.size(); ++i) {  // the floor counts the TCP halves' spans
      pairing_window_.add_paired(spans_[i].src, now_ns);
      pairing_window_.add_paired(spans_[i].dst, now_ns);
    }
  }
  ingest_rdma(part, batch, now_ns);
  const auto full = part.correlator.counters().dropped_table_full + part.zmtp.counters().table_full;
  if (full != part.table_full_seen) {
    dropped_[static_cast<std::size_t>(DropReason::pending_full)] += full - part.table_full_seen;
    part.table_full_seen = full;
    part.last_loss_ns = now_ns;
  }
  const std::size_t first_message_span = spans_.size();
  ingest_messages(part, batch, now_ns);
  for (Span& span : spans_) {
    // The receive's wall-clock stamp on this host's monotonic axis: spacing between spans is
    // exact to the receiver's clock rate (ppm), the placement off by the receiver's clock error
    // (ms). Clamped so that a wild remote clock can neither date a span in the future nor before
    // its halves could have been waiting.
    const std::int64_t mapped = span.recv_ns - realtime_minus_mono_ns;
    const std::int64_t delay = now_ns - mapped;
    if (delays_ns_.size() < kDelaySamples) {
      delays_ns_.push_back(delay);
    } else {
      delays_ns_[next_delay_] = delay;
    }
    next_delay_ = (next_delay_ + 1) % kDelaySamples;
    span.capture_ns = std::clamp(mapped, now_ns - limits_.send_max_age_ns, now_ns);
    part.health.add(span, pair_bound(span.src, span.dst));
    part.estimator.observe(span);
    ++spans_paired_;
  }
  message_spans_.insert(message_spans_.end(), spans_.begin() + static_cast<std::ptrdiff_t>(first_message_span),
                        spans_.end());
}

std::optional<DomainId> RemotePairing::consume_domain(Partition& part, std::uint32_t index, std::int64_t now_ns) {
  ++halves_consumed_;
  const DomainId domain = batch_domains_[index];
  if (domain != 0xffff) return domain;
  ++dropped_[static_cast<std::size_t>(DropReason::remote_domain_full)];
  part.last_loss_ns = now_ns;
  return std::nullopt;
}

void RemotePairing::ingest_messages(Partition& part, const WireBatch& batch, std::int64_t now_ns) {
  for (const WireMessageHalf& w : batch.messages) {
    const std::optional<DomainId> known = consume_domain(part, w.domain, now_ns);
    if (!known) continue;
    const DomainId domain = *known;
    // Ages by arrival on this host; the span's ends are the two domains' wall-clock readings.
    const KafkaBatchEnd end{domain, now_ns, w.realtime_ns, w.bytes};
    const bool room = part.kafka.pending() < limits_.max_pending;
    if (w.kind == WireMessageHalf::Kind::produced) {
      part.kafka.produced(to_batch_half(w), end, room, spans_, message_info_);
    } else {
      part.kafka.fetched(to_batch_half(w), end, KafkaConsumerId{domain, w.consumer}, true, room, spans_, message_info_);
    }
  }
  const auto full = part.kafka.counters().table_full;
  if (full != part.kafka_full_seen) {
    dropped_[static_cast<std::size_t>(DropReason::pending_full)] += full - part.kafka_full_seen;
    part.kafka_full_seen = full;
    part.last_loss_ns = now_ns;
  }
}

void RemotePairing::take_message_spans(std::vector<Span>& spans, std::vector<MessageSpanInfo>& info) {
  spans.clear();
  info.clear();
  spans.swap(message_spans_);
  info.swap(message_info_);
}

void RemotePairing::note_gap(std::int32_t partition, std::uint64_t records, std::int64_t now_ns) {
  // Counted whoever owns the partition now: a gap seen in a fetch that raced a revoke is still
  // records the broker no longer had, and the next owner, which resumes after the record that
  // showed the gap once its offset is committed, will not see it.
  dropped_[static_cast<std::size_t>(DropReason::offset_gap)] += records;
  auto it = partitions_.find(partition);
  if (it != partitions_.end()) it->second.last_loss_ns = now_ns;  // its pairs' windows are incomplete
}

void RemotePairing::learn_translations(Partition& part, const WireBatch& batch, std::int64_t now_ns,
                                       const DomainRegistry& domains) {
  for (const WireTranslation& t : batch.translations) {
    nat_.learn(t, now_ns);
    // Halves of the connection that arrived before the translation wait under the untranslated
    // key, where nothing will pair them: take them back and send them on too.
    const FlowKey back{t.original.dst_addr, t.original.src_addr, t.original.dst_port, t.original.src_port};
    for (const FlowKey& flow : {t.original, back}) {
      taken_.clear();
      part.correlator.take_flow(flow, taken_);
      for (const Half& h : taken_) {
        if (forward_if_translated(h, domains)) {
          ++nat_.counters().halves_taken_back;
        } else {
          part.correlator.add(h, spans_);  // stamped outside the translation's validity: as it was
        }
      }
    }
  }
}

bool RemotePairing::forward_if_translated(const Half& half, const DomainRegistry& domains) {
  if (nat_.empty()) return false;
  const std::optional<FlowKey> to = nat_.translate(half.flow, half.domain_ns);
  if (!to) return false;
  if (forwarded_halves_ >= limits_.max_pending) {
    ++dropped_[static_cast<std::size_t>(DropReason::outbox_full)];
    return true;
  }
  WireBatch& b = forwarded_[{host_pair_key(*to), half.domain}];
  if (b.domains.empty()) {
    b.domains.push_back(domains.name(half.domain));
    auto bound = domain_bound_ns_.find(half.domain);
    if (bound != domain_bound_ns_.end()) b.clock_error_bound_ns = bound->second;
    b.forwarded = true;
  }
  b.halves.push_back(WireHalf{half.kind, half.transport, *to, half.seq, half.bytes, half.domain_ns, 0});
  ++forwarded_halves_;
  ++nat_.counters().halves_forwarded;
  return true;
}

void RemotePairing::take_forwarded(std::vector<std::pair<std::string, WireBatch>>& out) {
  out.clear();
  for (auto& [key, batch] : forwarded_) out.emplace_back(key.first, std::move(batch));
  forwarded_.clear();
  forwarded_halves_ = 0;
}

void RemotePairing::learn_captured(const Half& half) {
  // By arrival on this host (capture_ns): the sender's clocks mean nothing here.
  captured_addresses_.learn(half.kind == HalfKind::send ? half.flow.src_addr : half.flow.dst_addr, half.capture_ns);
}

void RemotePairing::count_unpaired(std::int64_t now_ns) {
  // As for local halves: a half whose other end no agent captured (a host without an agent)
  // could never pair and says nothing; one whose peer is captured but did not pair (a translation
  // no agent undoes, a capture that missed the other end) hides that traffic's inversions.
  for (const UnpairedHalf& u : unpaired_) {
    if (is_loopback(u.peer)) continue;
    if (captured_addresses_.captured(u.peer, now_ns)) pairing_window_.add_unpaired(u.domain, now_ns);
  }
  unpaired_.clear();
}

void RemotePairing::tick(std::int64_t now_ns, bool estimate) {
  for (auto& [_, part] : partitions_) {
    part.correlator.expire(now_ns, &unpaired_);
    count_unpaired(now_ns);
    for (auto& [_, rdma] : part.rdma) rdma.expire(now_ns);
    part.kafka.expire(now_ns - limits_.send_max_age_ns);  // by arrival here, like the correlator
    part.zmtp.expire(now_ns - limits_.send_max_age_ns);
    if (estimate) part.estimator.tick(now_ns);
  }
  nat_.expire(now_ns);
  captured_addresses_.expire(now_ns);
}

bool RemotePairing::uncertain(const Partition& p, std::int64_t now_ns) const {
  return now_ns - p.owned_since_ns < window_ns_ || (p.last_loss_ns && now_ns - *p.last_loss_ns < window_ns_);
}

RemoteResults RemotePairing::results(std::int64_t now_ns) const {
  RemoteResults results;
  results.pairing = pairing_window_.report(now_ns);
  for (const auto& [_, part] : partitions_) {
    auto at_risk = [&](const PairKey& k) {
      auto e = part.estimator.estimate(k.src, k.dst);
      if (!e) return false;
      if (e->at_risk) return true;
      auto bound = pair_bound(k.src, k.dst);
      return bound && e->dt_min_ns && static_cast<double>(*bound) >= *e->dt_min_ns;
    };
    HealthReport h = part.health.report(now_ns, at_risk, results.pairing);
    const bool unsure = uncertain(part, now_ns);
    for (PairReport& pair : h.pairs) {
      if (unsure && pair.health != 0) {  // a violation seen stays certain
        pair.state = PairState::unknown;
        pair.health = std::nullopt;
        pair.unknown_reason =
            now_ns - part.owned_since_ns < window_ns_ ? UnknownReason::window_filling : UnknownReason::halves_lost;
      }
      results.pairs.push_back(std::move(pair));
    }
    for (auto& e : part.estimator.estimates()) results.estimates.push_back(e);
  }
  results.domain_bounds_ns.assign(domain_bound_ns_.begin(), domain_bound_ns_.end());
  return results;
}

void RemotePairing::fill(ExchangeReport& report) const {
  report.partitions = owned();
  report.halves_consumed = halves_consumed_;
  report.records_consumed = records_consumed_;
  report.spans_paired = spans_paired_;
  report.unpaired_sends = unpaired_sends_revoked_;
  if (!delays_ns_.empty()) {
    std::vector<std::int64_t> d = delays_ns_;
    auto at = [&d](double q) {
      auto k = static_cast<std::size_t>(q * static_cast<double>(d.size() - 1));
      std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end());
      return static_cast<double>(d[k]) * 1e-9;
    };
    report.pairing_delay_p50_seconds = at(0.5);
    report.pairing_delay_p99_seconds = at(0.99);
  }
  for (const auto& [_, part] : partitions_) report.unpaired_sends += part.correlator.counters().sends_expired;
  report.kafka_batches = kafka_revoked_;
  for (const auto& [_, part] : partitions_) add_kafka_counters(report.kafka_batches, part.kafka.counters());
  report.nat.translations = nat_.translations();
  report.nat.owner = nat_.counters();
  report.zmtp_messages = zmtp_revoked_;
  for (const auto& [_, part] : partitions_) add_zmtp_counters(report.zmtp_messages, part.zmtp.counters());
  for (std::size_t i = 0; i < dropped_.size(); ++i) report.dropped[i] += dropped_[i];
}

}  // namespace skewscope::exchange
