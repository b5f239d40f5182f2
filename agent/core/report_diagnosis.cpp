#include "core/report_diagnosis.hpp"

#include <map>

#include "clocks/ptp_management.hpp"
#include "diagnose/engine.hpp"

namespace skewscope {

diagnose::OffsetSample offset_sample(const estimate::PairEstimate& e) {
  diagnose::OffsetSample s;
  s.t_ns = e.evaluated_at_ns;
  if (e.offset_ns && e.bound_ns && e.lower_ns && e.upper_ns) {
    s.offset_ns = e.offset_ns;
    s.bound_ns = e.bound_ns;
  }
  s.settled = e.settled;
  s.broken = e.empty_interval;
  s.drift_ppm = e.drift_ppm;
  s.drift_bound_ppm = e.drift_bound_ppm;
  if (e.forward_min_span_ns) s.forward_min_span_ns = static_cast<double>(*e.forward_min_span_ns);
  if (e.reverse_min_span_ns) s.reverse_min_span_ns = static_cast<double>(*e.reverse_min_span_ns);
  s.window_filling = e.window_filling;
  return s;
}

void record_estimates(diagnose::HistoryBook& book, const std::vector<estimate::PairEstimate>& estimates,
                      const std::vector<std::string>& names, std::int64_t now_ns) {
  for (const auto& e : estimates)
    if (e.src < names.size() && e.dst < names.size()) book.add(names[e.src], names[e.dst], offset_sample(e));
  book.forget_stale(now_ns);
}

std::vector<diagnose::PairObservation> pair_observations(const AgentReport& r, const diagnose::HistoryBook& book) {
  // Every transport and both orientations of a pair of domains are one pair of clocks.
  std::map<std::pair<DomainId, DomainId>, diagnose::PairObservation> by_pair;
  auto entry = [&](DomainId a, DomainId b) -> std::pair<diagnose::PairObservation*, bool> {
    if (auto it = by_pair.find({b, a}); it != by_pair.end()) return {&it->second, true};
    auto [it, fresh] = by_pair.try_emplace({a, b});
    if (fresh) {
      it->second.src = r.name(a);
      it->second.dst = r.name(b);
    }
    return {&it->second, false};
  };
  for (const auto& p : r.health.pairs) {
    if (p.key.src == p.key.dst) continue;
    auto [o, flipped] = entry(p.key.src, p.key.dst);
    (void)flipped;
    o->spans += p.window.spans;
    o->negative_spans += p.window.negative_spans;
    o->unexplained_negative_spans += p.unexplained_negative_spans;
    o->capture_complete = o->capture_complete && p.capture_complete;
  }
  for (auto& [key, o] : by_pair) {
    const auto* e = r.estimate_for(key.first, key.second);
    if (!e) continue;
    o.has_estimate = true;
    o.now = offset_sample(*e);
    o.two_sided = o.now.offset_ns.has_value();
    if (auto h = book.find(o.src, o.dst)) {
      o.shift = h->shift(book.config());
      o.history_settled = h->ever_settled();
      o.first_settled = h->first_settled();
      o.floor_fall = h->floor_fall(book.config());
      if (o.floor_fall) o.floor_falling = h->floor_falling(*o.floor_fall, book.config());
    }
  }
  std::vector<diagnose::PairObservation> out;
  out.reserve(by_pair.size());
  for (auto& [key, o] : by_pair) out.push_back(std::move(o));
  return out;
}

std::vector<diagnose::HostClock> host_clocks(const AgentReport& r) {
  // Remote domains were interned after every local one (the exchange starts after the registry).
  const std::size_t remote = r.exchange ? r.exchange->remote_domains : 0;
  const std::size_t local = r.domain_names.size() >= remote ? r.domain_names.size() - remote : 0;
  const clocks::PtpSocketSnapshot* client = nullptr;  // the ptp4l instance a client clock follows
  for (const auto& p : r.clocks.ptp)
    if (!p.serving && p.port_state) {
      client = &p;
      break;
    }
  std::vector<diagnose::HostClock> out;
  for (std::size_t i = 0; i < r.domain_names.size(); ++i) {
    diagnose::HostClock c;
    c.host = r.domain_names[i];
    if (i < r.domain_clocks.size() && r.domain_clocks[i].error_bound_ns)
      c.error_bound_ns = static_cast<double>(*r.domain_clocks[i].error_bound_ns);
    if (i < local && r.clocks.polled) {
      c.readings = r.clocks.timex.has_value() || client != nullptr;
      c.status = std::string(clocks::to_string(r.clocks.status));
      if (client) {
        c.ptp = true;
        c.port_state = clocks::ptp::port_state_name(static_cast<std::uint8_t>(*client->port_state));
        c.gm_present = client->gm_present;
        c.gm_identity = client->gm_identity;
        if (client->master_offset_seconds) c.ptp_offset_ns = *client->master_offset_seconds * 1e9;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

void add_diagnosis(AgentReport& report, const diagnose::HistoryBook& book, std::int64_t now_ns) {
  report.diagnosis = diagnose::diagnose(pair_observations(report, book), host_clocks(report), book.config());
  for (auto& p : report.diagnosis.pairs)
    if (p.since_ns) p.age_seconds = static_cast<double>(now_ns - *p.since_ns) * 1e-9;
}

}  // namespace skewscope
