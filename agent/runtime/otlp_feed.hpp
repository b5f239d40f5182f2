// The OTLP exporter's feed (--otlp-endpoint): reads the spans the core paired since the last read
// from its recent-span ring, each with what the agent knows of its pair at that moment (offset,
// bound, state, the capped correction), for the exporter's queue. The caller holds the core's
// lock for read_new() only; the exporter's I/O happens on its own thread, after the lock is gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "api/agent_routes.hpp"
#include "core/shared_core.hpp"
#include "otlp/otlp_exporter.hpp"
#include "otlp/span_export.hpp"

namespace skewscope {

class OtlpFeed {
 public:
  // Spans pushed since the last call, oldest first. Those the ring no longer held are counted in
  // missed() (the feed fell more than AgentCore::kRecentSpans behind).
  std::vector<otlp::ExportSpan> read_new(const AgentCore& core, std::int64_t now_ns);
  std::uint64_t take_missed() { return std::exchange(missed_, 0); }

  static constexpr std::int64_t kStateRefreshNs = 1'000'000'000;

 private:
  std::uint64_t seen_ = 0;  // RecentRing::pushed() at the last read
  std::uint64_t missed_ = 0;
  std::map<PairKey, PairState> states_;  // from the last report, at most kStateRefreshNs old
  std::int64_t states_at_ns_ = 0;
  bool have_states_ = false;
};

// Each span's `trusted` from the policies (--policy-file), asked once per pair and transport of
// the batch. Called after the core's lock is released: the policies answer under their own lock.
void apply_span_trust(std::vector<otlp::ExportSpan>& spans, const SpanTrust& trust);

// --otlp-metrics: every pair of the report as the status JSON shows it (health, state, and the
// offset, its bound and Δt_min by the same rule, estimate::shown_offset), at `time_unix_nano`.
otlp::MetricsSnapshot metrics_snapshot(const AgentReport& report, std::int64_t time_unix_nano);

// The feed's thread: every `period_ns`, read under the lock, mark trust, then offer to the
// exporter; with --otlp-metrics, every metrics interval a snapshot of `take_report()` (the
// report the status renders, which takes the core's lock itself).
void run_otlp_loop(SharedCore& core, otlp::OtlpExporter& exporter, const std::atomic<bool>& stopping,
                   const SpanTrust& trust = {}, const std::function<AgentReport()>& take_report = {},
                   std::int64_t period_ns = 100'000'000);

}  // namespace skewscope
