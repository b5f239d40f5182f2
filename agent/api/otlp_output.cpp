#include "api/otlp_output.hpp"

namespace skewscope {

using otlp::OtlpDrop;

namespace {

// The drop reasons that can happen to a metrics snapshot (no sampling, no ring to overrun; partial
// rejections are counted as data points).
constexpr OtlpDrop kSnapshotDrops[] = {OtlpDrop::queue_full, OtlpDrop::retries_exhausted, OtlpDrop::rejected,
                                       OtlpDrop::shutdown};

nlohmann::json otlp_metrics_json(const otlp::OtlpReport::Metrics& m) {
  nlohmann::json dropped = nlohmann::json::object();
  for (OtlpDrop d : kSnapshotDrops) dropped[otlp::otlp_drop_name(d)] = m.dropped[static_cast<std::size_t>(d)];
  return {{"url", m.url},
          {"snapshots_offered", m.offered},
          {"snapshots_exported", m.exported},
          {"snapshots_dropped", dropped},
          {"snapshots_queued", m.queued},
          {"snapshots_sending", m.sending},
          {"data_points_exported", m.data_points_exported},
          {"data_points_rejected", m.data_points_rejected},
          {"requests_ok", m.requests_ok},
          {"requests_failed", m.requests_failed},
          {"retries", m.retries},
          {"last_error", m.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.last_error)}};
}

void append_otlp_metrics_export(PrometheusWriter& w, const otlp::OtlpReport::Metrics& m) {
  w.family("skewscope_otlp_metric_snapshots_total", "counter",
           "Snapshots of the pairs' gauges through the OTLP exporter (--otlp-metrics): offered, exported.");
  w.sample("skewscope_otlp_metric_snapshots_total", {{"result", "offered"}}, static_cast<double>(m.offered));
  w.sample("skewscope_otlp_metric_snapshots_total", {{"result", "exported"}}, static_cast<double>(m.exported));
  w.family("skewscope_otlp_metric_snapshots_dropped_total", "counter",
           "Gauge snapshots meant for the OTLP receiver that did not reach it, by reason.");
  for (OtlpDrop d : kSnapshotDrops)
    w.sample("skewscope_otlp_metric_snapshots_dropped_total", {{"reason", otlp::otlp_drop_name(d)}},
             static_cast<double>(m.dropped[static_cast<std::size_t>(d)]));
  w.family("skewscope_otlp_metric_data_points_total", "counter",
           "Gauge data points sent over OTLP: exported, or rejected by the receiver (partial success).");
  w.sample("skewscope_otlp_metric_data_points_total", {{"result", "exported"}},
           static_cast<double>(m.data_points_exported));
  w.sample("skewscope_otlp_metric_data_points_total", {{"result", "rejected"}},
           static_cast<double>(m.data_points_rejected));
  w.family("skewscope_otlp_metric_requests_total", "counter",
           "OTLP metrics export requests: ok (2xx), failed (any other status or no answer, retried or not).");
  w.sample("skewscope_otlp_metric_requests_total", {{"result", "ok"}}, static_cast<double>(m.requests_ok));
  w.sample("skewscope_otlp_metric_requests_total", {{"result", "failed"}}, static_cast<double>(m.requests_failed));
}

}  // namespace

nlohmann::json otlp_json(const otlp::OtlpReport& o) {
  nlohmann::json dropped = nlohmann::json::object();
  for (std::size_t i = 0; i < o.dropped.size(); ++i)
    dropped[otlp::otlp_drop_name(static_cast<OtlpDrop>(i))] = o.dropped[i];
  return {{"metrics", o.metrics ? otlp_metrics_json(*o.metrics) : nlohmann::json(nullptr)},
          {"url", o.url},
          {"spans_offered", o.offered},
          {"spans_exported", o.exported},
          {"spans_sampled_out", o.sampled_out},
          {"spans_dropped", dropped},
          {"spans_queued", o.queued},
          {"spans_sending", o.sending},
          {"requests_ok", o.requests_ok},
          {"requests_failed", o.requests_failed},
          {"retries", o.retries},
          {"last_error", o.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.last_error)}};
}

void append_otlp_metrics(PrometheusWriter& w, const otlp::OtlpReport& o) {
  w.family("skewscope_otlp_spans_total", "counter",
           "Paired spans through the OTLP exporter: offered (read from the agent), exported (accepted by the "
           "receiver), sampled_out (not sent by --otlp-sample).");
  w.sample("skewscope_otlp_spans_total", {{"result", "offered"}}, static_cast<double>(o.offered));
  w.sample("skewscope_otlp_spans_total", {{"result", "exported"}}, static_cast<double>(o.exported));
  w.sample("skewscope_otlp_spans_total", {{"result", "sampled_out"}}, static_cast<double>(o.sampled_out));
  w.family("skewscope_otlp_spans_dropped_total", "counter",
           "Spans meant for the OTLP receiver that did not reach it, by reason.");
  for (std::size_t i = 0; i < o.dropped.size(); ++i)
    w.sample("skewscope_otlp_spans_dropped_total", {{"reason", otlp::otlp_drop_name(static_cast<OtlpDrop>(i))}},
             static_cast<double>(o.dropped[i]));
  w.family("skewscope_otlp_queued_spans", "gauge", "Spans in the OTLP exporter: queued, or in the request under way.");
  w.sample("skewscope_otlp_queued_spans", static_cast<double>(o.queued + o.sending));
  w.family("skewscope_otlp_requests_total", "counter",
           "OTLP export requests: ok (2xx), failed (any other status or no answer, whether retried or not).");
  w.sample("skewscope_otlp_requests_total", {{"result", "ok"}}, static_cast<double>(o.requests_ok));
  w.sample("skewscope_otlp_requests_total", {{"result", "failed"}}, static_cast<double>(o.requests_failed));
  w.family("skewscope_otlp_retries_total", "counter",
           "OTLP export attempts after a batch's first (429/502/503/504, no answer).");
  w.sample("skewscope_otlp_retries_total", static_cast<double>(o.retries));
  if (o.metrics) append_otlp_metrics_export(w, *o.metrics);
}

}  // namespace skewscope
