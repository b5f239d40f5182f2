#include "runtime/otlp_feed.hpp"

#include <chrono>
#include <thread>
#include <tuple>

#include "capture/clock_mapping.hpp"
#include "estimate/correct.hpp"

namespace skewscope {

std::vector<otlp::ExportSpan> OtlpFeed::read_new(const AgentCore& core, std::int64_t now_ns) {
  std::vector<otlp::ExportSpan> out;
  const auto& recent = core.recent_spans();
  const std::uint64_t pushed = recent.pushed();
  if (pushed == seen_) return out;
  // The pair states come from a full report, which costs more than reading spans: once a second,
  // and at once when a negative span arrives for a pair not yet known violated (the report made
  // after it was paired says so), so that no span of a freshly violated pair goes out as ok.
  bool refresh = !have_states_ || now_ns - states_at_ns_ >= kStateRefreshNs;
  const std::size_t fresh_kept = static_cast<std::size_t>(std::min<std::uint64_t>(pushed - seen_, recent.size()));
  for (std::size_t i = recent.size() - fresh_kept; !refresh && i < recent.size(); ++i) {
    const Span& span = recent[i].span;
    if (span.span_ns() >= 0) continue;
    auto known = states_.find(PairKey{span.src, span.dst, span.transport});
    refresh = known == states_.end() || known->second != PairState::violated;
  }
  if (refresh) {
    states_.clear();
    for (const auto& p : core.report(now_ns).health.pairs) states_[p.key] = p.state;
    states_at_ns_ = now_ns;
    have_states_ = true;
  }
  std::uint64_t fresh = pushed - seen_;
  if (fresh > recent.size()) {
    missed_ += fresh - recent.size();
    fresh = recent.size();
  }
  seen_ = pushed;
  out.reserve(fresh);
  for (std::size_t i = recent.size() - fresh; i < recent.size(); ++i) {
    const AgentCore::RecentSpan& r = recent[i];
    otlp::ExportSpan& s = out.emplace_back();
    s.span = r.span;
    s.src = core.domains().name(r.span.src);
    s.dst = core.domains().name(r.span.dst);
    s.topic = r.topic;
    s.partition = r.partition;
    s.records = r.records;
    s.socket = r.socket;
    s.corrected.send_ns = r.span.send_ns;
    s.corrected.recv_ns = r.span.recv_ns;
    // Offset and correction only from a settled two-sided interval (estimate/estimator.hpp: only
    // then does the midpoint mean anything); the correction is the one /api/v1/spans gives, capped.
    if (auto e = core.estimator().estimate(r.span.src, r.span.dst); e && e->settled) {
      s.corrected = estimate::correct_span(r.span, *e, estimate::kMaxExportedCorrectionNs);
      s.offset_ns = e->offset_ns;
      s.bound_ns = e->bound_ns;
    }
    s.at_risk = core.pair_at_risk(r.span.src, r.span.dst);
    auto state = states_.find(PairKey{r.span.src, r.span.dst, r.span.transport});
    s.state = state == states_.end() ? PairState::unknown : state->second;
  }
  return out;
}

void apply_span_trust(std::vector<otlp::ExportSpan>& spans, const SpanTrust& trust) {
  if (!trust) return;
  std::map<std::tuple<std::string, std::string, Transport>, std::optional<bool>> asked;
  for (auto& s : spans) {
    auto key = std::make_tuple(s.src, s.dst, s.span.transport);
    auto it = asked.find(key);
    if (it == asked.end()) it = asked.emplace(key, trust(s.src, s.dst, s.span.transport)).first;
    s.trusted = it->second;
  }
}

otlp::MetricsSnapshot metrics_snapshot(const AgentReport& report, std::int64_t time_unix_nano) {
  otlp::MetricsSnapshot snapshot;
  snapshot.time_unix_nano = time_unix_nano;
  for (const auto& p : report.health.pairs) {
    otlp::PairGauges& g = snapshot.pairs.emplace_back();
    g.src = report.name(p.key.src);
    g.dst = report.name(p.key.dst);
    g.transport = p.key.transport;
    g.health = p.health;
    g.state = p.state;
    const auto* e = report.estimate_for(p.key.src, p.key.dst);
    const estimate::ShownOffset shown = estimate::shown_offset(e);
    if (shown.offset_ns && shown.bound_ns) {
      g.offset_s = *shown.offset_ns * 1e-9;
      g.offset_bound_s = *shown.bound_ns * 1e-9;
    }
    if (e && e->dt_min_ns) g.delta_t_min_s = *e->dt_min_ns * 1e-9;
  }
  return snapshot;
}

void run_otlp_loop(SharedCore& core, otlp::OtlpExporter& exporter, const std::atomic<bool>& stopping,
                   const SpanTrust& trust, const std::function<AgentReport()>& take_report, std::int64_t period_ns) {
  OtlpFeed feed;
  const bool metrics = exporter.metrics_enabled() && take_report;
  std::int64_t next_metrics_ns = monotonic_now_ns() + exporter.settings().metrics_interval_ns;
  while (!stopping) {
    if (const std::int64_t now_ns = monotonic_now_ns(); metrics && now_ns >= next_metrics_ns) {
      // On the interval's grid, without a burst of catch-up snapshots after a stall.
      next_metrics_ns += exporter.settings().metrics_interval_ns;
      if (next_metrics_ns <= now_ns) next_metrics_ns = now_ns + exporter.settings().metrics_interval_ns;
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      exporter.offer_metrics(
          metrics_snapshot(take_report(), std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
    }
    std::vector<otlp::ExportSpan> spans;
    spans = core.with([&feed](AgentCore& c) { return feed.read_new(c, monotonic_now_ns()); });
    if (const auto missed = feed.take_missed()) exporter.count_overrun(missed);
    apply_span_trust(spans, trust);
    if (!spans.empty()) exporter.offer(std::move(spans));
    std::this_thread::sleep_for(std::chrono::nanoseconds(period_ns));
  }
}

}  // namespace skewscope
