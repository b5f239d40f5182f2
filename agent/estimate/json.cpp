#include "estimate/json.hpp"

namespace skewscope::estimate {
namespace {

nlohmann::json seconds(const std::optional<double>& ns) {
  return ns ? nlohmann::json(*ns * 1e-9) : nlohmann::json(nullptr);
}
nlohmann::json seconds(const std::optional<std::int64_t>& ns) {
  return ns ? nlohmann::json(static_cast<double>(*ns) * 1e-9) : nlohmann::json(nullptr);
}
nlohmann::json plain(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json offset_fields(const PairEstimate* e) {
  const ShownOffset shown = shown_offset(e);
  auto name_or_null = [](const char* n) { return n ? nlohmann::json(n) : nlohmann::json(nullptr); };
  const bool judged = e && e->settled && shown.missing == OffsetMissing::none;
  return {
      {"offset_seconds", seconds(shown.offset_ns)},
      {"offset_bound_seconds", seconds(shown.bound_ns)},
      {"offset_missing", name_or_null(offset_missing_name(shown.missing))},
      {"offset_missing_bound", name_or_null(missing_bound_name(shown.missing_bound))},
      // at_risk from the traffic needs a midpoint that means something; otherwise it is not judged
      // (null), and a state of ok only says that no inversion was seen.
      {"at_risk", judged ? nlohmann::json(e->at_risk) : nlohmann::json(nullptr)},
      {"at_risk_basis", judged ? "settled_interval" : "not_assessed"},
  };
}

nlohmann::json to_json(const PairEstimate& e, const DomainName& name) {
  const bool shown = shown_offset(&e).missing == OffsetMissing::none;
  // Values computed from the midpoint (or from the slope that settles with it) are left out with it.
  auto from_midpoint = [shown](const std::optional<double>& v) { return shown ? v : std::nullopt; };
  nlohmann::json j = {
      {"src", name(e.src)},
      {"dst", name(e.dst)},
      {"offset_lower_bound_seconds", seconds(e.lower_ns)},
      {"offset_upper_bound_seconds", seconds(e.upper_ns)},
      {"drift_ppm", plain(e.drift_ppm)},
      {"drift_bound_ppm", plain(e.drift_bound_ppm)},
      {"delta_t_min_seconds", seconds(e.dt_min_ns)},
      // The margins are minimum spans referred to now along the fitted slope: while the interval
      // is unsettled that slope is not pinned and they can be off by hundreds of µs.
      {"inversion_margin_seconds",
       {{"forward", seconds(from_midpoint(e.forward_margin_ns))},
        {"reverse", seconds(from_midpoint(e.reverse_margin_ns))}}},
      {"inversion_onset_offset_seconds",
       {{"forward", seconds(from_midpoint(e.forward_onset_ns))},
        {"reverse", seconds(from_midpoint(e.reverse_onset_ns))}}},
      {"risk_ratio", plain(from_midpoint(e.risk_ratio))},
      {"empty_interval", e.empty_interval},
      {"empty_interval_total", e.empty_interval_episodes},
      {"estimate_window",
       {{"forward_spans", e.forward_spans},
        {"reverse_spans", e.reverse_spans},
        {"forward_min_span_seconds", seconds(e.forward_min_span_ns)},
        {"reverse_min_span_seconds", seconds(e.reverse_min_span_ns)},
        {"buckets_live", e.buckets_live},
        {"buckets_used", e.buckets_used}}},
  };
  j.update(offset_fields(&e));
  return j;
}

nlohmann::json to_json(const TriangleReport& r, const DomainName& name) {
  nlohmann::json broken = nlohmann::json::array();
  for (const auto& b : r.broken)
    broken.push_back({{"domains", {name(b.a), name(b.b), name(b.c)}},
                      {"loop_sum_seconds", b.sum_ns * 1e-9},
                      {"tolerance_seconds", b.tolerance_ns * 1e-9}});
  nlohmann::json implicated = nlohmann::json::array();
  for (const auto& i : r.implicated)
    implicated.push_back({{"domain", name(i.domain)}, {"broken", i.broken}, {"triangles", i.triangles}});
  nlohmann::json most = nlohmann::json::array();
  for (DomainId d : r.most_implicated) most.push_back(name(d));
  return {{"checked", r.checked},
          {"broken_total", r.broken_total},
          {"broken", broken},
          {"implicated", implicated},
          {"most_implicated", most}};
}

nlohmann::json to_json(const WhatIfTable& t, const DomainName& name) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : t.models)
    models.push_back({{"spec", m.spec},
                      {"distribution", m.kind == ErrorKind::gaussian ? "gaussian" : "laplace"},
                      {"scale_seconds", m.scale_ns * 1e-9}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : t.rows)
    rows.push_back({{"src", name(r.src)},
                    {"dst", name(r.dst)},
                    {"window_spans", r.window_spans},
                    {"samples", r.samples},
                    {"observed_negative_ratio", r.observed_negative_ratio},
                    {"inversion_ratio", r.rate},
                    {"violated_probability", r.violated},
                    {"offset_missing", r.offset_missing == OffsetMissing::none
                                           ? nlohmann::json(nullptr)
                                           : nlohmann::json(offset_missing_name(r.offset_missing))},
                    // What the rates assume about the present offset.
                    {"offset_assumption", r.offset_removed ? "estimate_removed" : "as_observed"}});
  return {{"models", models},
          {"pairs", rows},
          {"misordered_share", t.message_share},
          {"pairs_violated_share", t.pairs_violated_share}};
}

nlohmann::json to_json(const CorrectedSpan& c) {
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"send_ns", c.send_ns},
          {"recv_ns", c.recv_ns},
          {"corrected_recv_ns", opt(c.corrected_recv_ns)},
          {"correction_ns", opt(c.correction_ns)},
          {"correction_bound_ns", opt(c.bound_ns)},
          {"corrected", c.corrected},
          {"clamped", c.clamped},
          {"capped", c.capped}};
}

nlohmann::json to_json(const Counters& c) {
  return {{"spans", c.spans},
          {"late_spans", c.late_spans},
          {"same_domain_spans", c.same_domain_spans},
          {"pair_table_full", c.pair_table_full},
          {"empty_interval_episodes", c.empty_interval_episodes},
          {"pairs_evicted", c.pairs_evicted}};
}

}  // namespace skewscope::estimate
