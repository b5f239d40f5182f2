#include "cli/agent_core.hpp"

namespace skewscope {

AgentCore::AgentCore(DomainRegistry domains, AgentCoreConfig config)
    : domains_(std::move(domains)),
      config_(config),
      correlator_(config.limits),
      health_(config.window_ns) {}

bool AgentCore::is_own_traffic(const skewscope_half_event& e) const {
  return own_port_ && e.netns_ino == own_netns_ && (e.local_port == *own_port_ || e.remote_port == *own_port_);
}

void AgentCore::ingest(const std::vector<skewscope_half_event>& batch) {
  spans_.clear();
  ingest_.records += batch.size();
  for (const auto& event : batch) {
    if (is_own_traffic(event)) {
      ++ingest_.own_traffic;
      continue;
    }
    Decoded decoded = decode_half(event);
    if (!decoded.half) {
      ++ingest_.rejected[static_cast<std::size_t>(decoded.reject)];
      continue;
    }
    auto domain = domains_.classify(event.netns_ino, event.cgroup_id);
    if (!domain) {
      ++ingest_.outside_domains;
      continue;
    }
    Half& half = *decoded.half;
    half.domain = *domain;
    half.domain_ns =
        clock_mapping_.to_realtime(half.capture_ns) + simulated_.error_ns(half.domain, half.capture_ns);
    (half.kind == HalfKind::send ? ingest_.sends : ingest_.recvs) += 1;
    correlator_.add(half, spans_);
  }
  for (const Span& span : spans_) health_.add(span);
}

void AgentCore::tick(std::int64_t now_ns) { correlator_.expire(now_ns); }

AgentReport AgentCore::report(std::int64_t now_ns, const SourceCounters& source) const {
  AgentReport r;
  r.health = health_.report(now_ns);
  for (std::size_t i = 0; i < domains_.size(); ++i) r.domain_names.push_back(domains_.name(static_cast<DomainId>(i)));
  r.source = source;
  r.ingest = ingest_;
  r.correlator = correlator_.counters();
  r.pending_sends = correlator_.pending_sends();
  r.pending_recvs = correlator_.pending_recvs();
  return r;
}

}  // namespace skewscope
