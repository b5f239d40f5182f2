#include "api/agent_metrics.hpp"

#include "api/diagnosis_output.hpp"
#include "api/family_output.hpp"
#include "api/nat_output.hpp"
#include "api/otlp_output.hpp"
#include "api/payload_output.hpp"

#include <map>

#include "api/level_output.hpp"
#include "api/process_metrics.hpp"
#include "clocks/render.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {
namespace {

// The {src,dst} families aggregate a pair's transports: health is the worst, the ratio and the
// minimum are over all of the pair's spans in the window.
struct DirectedTotals {
  SpanHistograms histograms;
  std::uint64_t window_spans = 0;
  std::uint64_t window_negative = 0;
  std::optional<std::int64_t> min_span_ns;
  bool violated = false;  // a transport is violated
  bool unknown = false;   // a transport is unknown for a reason other than silence
  bool healthy = false;   // a transport has health 1
  bool capture_complete = true;
  // A violation on any transport wins (it is certain), then unknown, then 1 from a transport with
  // evidence. A transport whose window holds no span has no say: it neither vouches for the pair
  // nor hides an inversion; with no transport left the pair is unknown (absent).
  std::optional<int> health() const {
    if (violated) return 0;
    if (unknown || !healthy) return std::nullopt;
    return 1;
  }
};

std::map<std::pair<DomainId, DomainId>, DirectedTotals> by_direction(const HealthReport& h) {
  std::map<std::pair<DomainId, DomainId>, DirectedTotals> out;
  for (const auto& p : h.pairs) {
    auto& t = out[{p.key.src, p.key.dst}];
    t.histograms.merge(p.histograms);
    t.window_spans += p.window.spans;
    t.window_negative += p.window.negative_spans;
    if (p.window.min_span_ns)
      t.min_span_ns = t.min_span_ns ? std::min(*t.min_span_ns, *p.window.min_span_ns) : *p.window.min_span_ns;
    t.violated = t.violated || p.health == 0;
    t.healthy = t.healthy || p.health == 1;
    t.unknown = t.unknown || (!p.health && p.unknown_reason != UnknownReason::no_spans);
    t.capture_complete = t.capture_complete && p.capture_complete;
  }
  return out;
}

void write_histogram(PrometheusWriter& w, std::string_view name, const std::string& src, const std::string& dst,
                     const Histogram& h) {
  const std::string bucket = std::string(name) + "_bucket";
  for (std::size_t i = 0; i < kSpanBucketsSeconds.size(); ++i) {
    const std::string le = format_sample_value(kSpanBucketsSeconds[i]);
    w.sample(bucket, {{"src", src}, {"dst", dst}, {"le", le}}, static_cast<double>(h.le(i)));
  }
  w.sample(bucket, {{"src", src}, {"dst", dst}, {"le", "+Inf"}}, static_cast<double>(h.count));
  w.sample(std::string(name) + "_sum", {{"src", src}, {"dst", dst}}, h.sum_seconds);
  w.sample(std::string(name) + "_count", {{"src", src}, {"dst", dst}}, static_cast<double>(h.count));
}

// Only with --exchange: the halves that cross hosts over Kafka.
void append_exchange_metrics(PrometheusWriter& w, const exchange::ExchangeReport& x) {
  using exchange::DropReason;
  using exchange::RecordReject;
  w.family("skewscope_exchange_connected", "gauge",
           "1 when a Kafka broker of the exchange answered in the last second.");
  w.sample("skewscope_exchange_connected", x.connected ? 1 : 0);
  w.family("skewscope_exchange_halves_total", "counter",
           "Halves through the exchange: produced (acknowledged by Kafka), consumed (from owned partitions), "
           "local (both ends on this agent, never shipped), sampled_out (not shipped by --exchange-sample).");
  w.sample("skewscope_exchange_halves_total", {{"direction", "produced"}}, static_cast<double>(x.halves_produced));
  w.sample("skewscope_exchange_halves_total", {{"direction", "consumed"}}, static_cast<double>(x.halves_consumed));
  w.sample("skewscope_exchange_halves_total", {{"direction", "local"}}, static_cast<double>(x.halves_local));
  w.sample("skewscope_exchange_halves_total", {{"direction", "sampled_out"}},
           static_cast<double>(x.halves_sampled_out));
  w.family("skewscope_exchange_spans_paired_total", "counter",
           "Spans paired on this owner from the exchange's halves, over every partition it has owned (a pair's own "
           "span counts restart when its partition moves).");
  w.sample("skewscope_exchange_spans_paired_total", static_cast<double>(x.spans_paired));
  w.family("skewscope_exchange_dropped_total", "counter",
           "Halves meant to cross the exchange that did not, by reason.");
  for (std::size_t i = 0; i < x.dropped.size(); ++i)
    w.sample("skewscope_exchange_dropped_total", {{"reason", exchange::drop_reason_name(static_cast<DropReason>(i))}},
             static_cast<double>(x.dropped[i]));
  w.family("skewscope_exchange_records_rejected_total", "counter",
           "Records read from the topic and ignored: not a skewscope record, another format version, malformed, "
           "or refused by the trust checks (unsigned, bad signature, unknown signer, stale, replayed, oversized, "
           "another agent's domains; docs/security.md).");
  for (std::size_t i = 0; i < x.rejected.size(); ++i)
    w.sample("skewscope_exchange_records_rejected_total",
             {{"reason", exchange::record_reject_name(static_cast<RecordReject>(i))}},
             static_cast<double>(x.rejected[i]));
  w.family("skewscope_exchange_insecure", "gauge",
           "1 when the exchange runs with --exchange-insecure: records are neither signed nor verified.");
  w.sample("skewscope_exchange_insecure", x.insecure ? 1 : 0);
  w.family("skewscope_exchange_keys", "gauge", "Exchange keys accepted (--exchange-key-file); the first signs.");
  w.sample("skewscope_exchange_keys", static_cast<double>(x.key_ids.size()));
  w.family("skewscope_exchange_key_reload_failures_total", "counter",
           "Re-reads of the exchange key files that failed; the keys in use were kept.");
  w.sample("skewscope_exchange_key_reload_failures_total", static_cast<double>(x.key_reload_failures));
  w.family("skewscope_exchange_domains_bound", "gauge",
           "Domain names bound to the agent that speaks for them (this agent's own included).");
  w.sample("skewscope_exchange_domains_bound", static_cast<double>(x.domains_bound));
  w.family("skewscope_exchange_consumer_lag", "gauge", "Records behind the high watermark, over the owned partitions.");
  if (x.consumer_lag) w.sample("skewscope_exchange_consumer_lag", static_cast<double>(*x.consumer_lag));
  w.family("skewscope_exchange_partitions_owned", "gauge", "Partitions of the exchange topic this agent pairs.");
  w.sample("skewscope_exchange_partitions_owned", static_cast<double>(x.partitions.size()));
  w.family("skewscope_exchange_kafka_batches_total", "counter",
           "Kafka record batch halves (--payload-bytes) through the exchange: shipped by this agent, received and "
           "paired on its owned partitions, unpaired (aged out).");
  const auto& k = x.kafka_batches;
  const std::pair<const char*, std::uint64_t> rows[] = {{"shipped", x.kafka_halves_shipped},
                                                        {"produced_received", k.produced},
                                                        {"fetched_received", k.fetched},
                                                        {"paired", k.pairs},
                                                        {"unpaired_produced", k.unpaired_produced},
                                                        {"unpaired_fetched", k.unpaired_fetched}};
  for (const auto& [event, n] : rows)
    w.sample("skewscope_exchange_kafka_batches_total", {{"event", event}}, static_cast<double>(n));
  w.family("skewscope_exchange_nat_total", "counter",
           "Address translations from routers through the exchange: shipped by this agent (it reads a router's "
           "conntrack), received on its owned partitions, evicted or expired there, and the halves re-keyed by them "
           "(forwarded, of which taken back) or stamped outside their validity.");
  const auto& n = x.nat;
  const std::pair<const char*, std::uint64_t> nat_rows[] = {{"shipped", n.translations_shipped},
                                                            {"outbox_full", n.translations_outbox_full},
                                                            {"received", n.owner.received},
                                                            {"evicted_full", n.owner.evicted_full},
                                                            {"expired", n.owner.expired},
                                                            {"halves_forwarded", n.owner.halves_forwarded},
                                                            {"halves_taken_back", n.owner.halves_taken_back},
                                                            {"halves_outside_window", n.owner.outside_window}};
  for (const auto& [event, count] : nat_rows)
    w.sample("skewscope_exchange_nat_total", {{"event", event}}, static_cast<double>(count));
}

}  // namespace

std::string render_agent_metrics(const AgentReport& r, const std::string& version) {
  std::string out;
  PrometheusWriter w(out);
  const auto directed = by_direction(r.health);

  // Health is a claim of certainty: when the agent cannot know (capture down, halves lost or a
  // domain's halves unpaired in the window without a negative span seen, no span at all), the
  // sample is left out rather than given a value; skewscope_health_unknown says why.
  w.family("skewscope_causality_health", "gauge",
           "1 when no pair saw a negative span (receive before send) in the health window and one had spans, "
           "else 0. Absent when the agent cannot know (skewscope_health_unknown says why): capture down, halves "
           "lost or a domain's halves unpaired in the window and no negative span seen, or no pair with a span.");
  if (r.health.health) w.sample("skewscope_causality_health", *r.health.health);

  w.family("skewscope_pair_causality_health", "gauge",
           "1 when the pair (src sends, dst receives) had spans and no negative span in the health window, else 0. "
           "Absent while unknown: no span in the window, halves lost or unpaired (status JSON unknown_reason).");
  for (const auto& [key, t] : directed)
    if (const auto health = t.health())
      w.sample("skewscope_pair_causality_health", {{"src", r.name(key.first)}, {"dst", r.name(key.second)}}, *health);

  w.family("skewscope_health_unknown", "gauge",
           "1, with the reason, while skewscope_causality_health is absent: capture_down, halves_lost, "
           "halves_unpaired (a domain below the pairing floor), no_pair_known (no pair has a span in the window).");
  if (!r.health.health)
    w.sample("skewscope_health_unknown", {{"reason", unknown_reason_name(r.health.unknown_reason)}}, 1);
  w.family("skewscope_window_pairing_ratio", "gauge",
           "Per local domain, of its halves in the health window whose peer is captured, the share that paired; "
           "below the pairing floor (status JSON capture.window_pairing) its health is unknown.");
  for (const auto& d : r.health.pairing)
    w.sample("skewscope_window_pairing_ratio", {{"domain", r.name(d.domain)}}, d.ratio());
  w.family("skewscope_window_unpaired_halves", "gauge",
           "Per local domain, halves in the health window whose peer is captured but that did not pair.");
  for (const auto& d : r.health.pairing)
    w.sample("skewscope_window_unpaired_halves", {{"domain", r.name(d.domain)}},
             static_cast<double>(d.unpaired_halves));

  w.family("skewscope_capture_up", "gauge",
           "1 while the capture (BPF ring buffer reader) runs; 0 once it failed (the agent exits soon after).");
  w.sample("skewscope_capture_up", r.health.capture_up ? 1 : 0);
  append_family_metrics(w, r.capture_families);
  w.family("skewscope_window_lost_halves", "gauge",
           "Halves lost (any reason in skewscope_events_lost_total except rejected_*) in the health window.");
  w.sample("skewscope_window_lost_halves", static_cast<double>(r.health.window_lost_halves));
  w.family("skewscope_pair_capture_complete", "gauge",
           "1 when the capture is up and lost no half in the pair's health window (a health of 1 can then be "
           "trusted), else 0. Losses cannot be tied to a pair, so they mark every pair.");
  for (const auto& [key, t] : directed)
    w.sample("skewscope_pair_capture_complete", {{"src", r.name(key.first)}, {"dst", r.name(key.second)}},
             t.capture_complete ? 1 : 0);

  w.family("skewscope_spans_total", "counter", "Paired messages (spans) seen from src to dst.");
  for (const auto& p : r.health.pairs)
    w.sample("skewscope_spans_total",
             {{"src", r.name(p.key.src)}, {"dst", r.name(p.key.dst)}, {"transport", transport_name(p.key.transport)}},
             static_cast<double>(p.spans));

  w.family("skewscope_negative_spans_total", "counter",
           "Spans whose receive time (dst clock) is before their send time (src clock).");
  for (const auto& p : r.health.pairs)
    w.sample("skewscope_negative_spans_total",
             {{"src", r.name(p.key.src)}, {"dst", r.name(p.key.dst)}, {"transport", transport_name(p.key.transport)}},
             static_cast<double>(p.negative_spans));

  w.family("skewscope_negative_span_ratio", "gauge",
           "Share of the pair's spans in the health window that are negative.");
  for (const auto& [key, t] : directed)
    w.sample("skewscope_negative_span_ratio", {{"src", r.name(key.first)}, {"dst", r.name(key.second)}},
             t.window_spans ? static_cast<double>(t.window_negative) / static_cast<double>(t.window_spans) : 0.0);

  w.family("skewscope_span_min_seconds", "gauge",
           "Smallest span (receive minus send, in the two hosts' clocks) in the health window.");
  for (const auto& [key, t] : directed)
    if (t.min_span_ns)
      w.sample("skewscope_span_min_seconds", {{"src", r.name(key.first)}, {"dst", r.name(key.second)}},
               static_cast<double>(*t.min_span_ns) * 1e-9);

  w.family("skewscope_span_duration_seconds", "histogram",
           "Spans (receive minus send, in the two hosts' clocks); the le=\"0\" bucket counts negative spans.");
  for (const auto& [key, t] : directed)
    write_histogram(w, "skewscope_span_duration_seconds", r.name(key.first), r.name(key.second), t.histograms.duration);
  w.family("skewscope_negative_span_magnitude_seconds", "histogram",
           "How far before its send a message was received, for the negative spans.");
  for (const auto& [key, t] : directed)
    write_histogram(w, "skewscope_negative_span_magnitude_seconds", r.name(key.first), r.name(key.second),
                    t.histograms.negative_magnitude);

  // An offset only with its bound, and only from a settled two-sided interval (shown_offset):
  // a one-sided or still-widening interval's midpoint would be a made-up number, so the series is
  // absent instead; the status JSON's offset_missing says why.
  w.family("skewscope_clock_offset_seconds", "gauge",
           "Estimated dst-minus-src clock offset, from the pair's traffic; only when bounded from both sides "
           "and settled.");
  for (const auto& e : r.estimates)
    if (const auto shown = estimate::shown_offset(&e); shown.offset_ns)
      w.sample("skewscope_clock_offset_seconds", {{"src", r.name(e.src)}, {"dst", r.name(e.dst)}},
               *shown.offset_ns * 1e-9);
  w.family("skewscope_clock_offset_bound_seconds", "gauge",
           "Half-width of the interval that holds the dst-minus-src clock offset; present with the offset.");
  for (const auto& e : r.estimates)
    if (const auto shown = estimate::shown_offset(&e); shown.bound_ns)
      w.sample("skewscope_clock_offset_bound_seconds", {{"src", r.name(e.src)}, {"dst", r.name(e.dst)}},
               *shown.bound_ns * 1e-9);
  w.family("skewscope_delta_t_min_seconds", "gauge",
           "Half the minimum round trip between the pair's hosts: a clock offset above it inverts messages.");
  for (const auto& e : r.estimates)
    if (e.dt_min_ns)
      w.sample("skewscope_delta_t_min_seconds", {{"src", r.name(e.src)}, {"dst", r.name(e.dst)}}, *e.dt_min_ns * 1e-9);
  w.family("skewscope_pair_at_risk", "gauge",
           "1 when the pair has no inversion yet but its offset estimate, or its hosts' clock error bounds, "
           "reach its Δt_min share (state at_risk).");
  for (const auto& [key, t] : directed) {
    bool risk = false;
    for (const auto& p : r.health.pairs)
      if (p.key.src == key.first && p.key.dst == key.second && p.state == PairState::at_risk) risk = true;
    w.sample("skewscope_pair_at_risk", {{"src", r.name(key.first)}, {"dst", r.name(key.second)}}, risk ? 1 : 0);
  }
  w.family("skewscope_unexplained_negative_spans_total", "counter",
           "Negative spans deeper than the two hosts' clock error bounds allow: violations the clock sources "
           "did not see coming.");
  for (const auto& p : r.health.pairs)
    w.sample("skewscope_unexplained_negative_spans_total",
             {{"src", r.name(p.key.src)}, {"dst", r.name(p.key.dst)}, {"transport", transport_name(p.key.transport)}},
             static_cast<double>(p.unexplained_negative_spans));

  w.family("skewscope_events_total", "counter", "Halves captured, by kind (send or recv).");
  w.sample("skewscope_events_total", {{"kind", "send"}}, static_cast<double>(r.ingest.sends));
  w.sample("skewscope_events_total", {{"kind", "recv"}}, static_cast<double>(r.ingest.recvs));

  w.family("skewscope_events_lost_total", "counter", "Halves lost before pairing, by reason.");
  w.sample("skewscope_events_lost_total", {{"reason", "ring_buffer_full"}}, static_cast<double>(r.source.ringbuf_full));
  w.sample("skewscope_events_lost_total", {{"reason", "inflight_table_full"}},
           static_cast<double>(r.source.inflight_full));
  w.sample("skewscope_events_lost_total", {{"reason", "malformed_record"}},
           static_cast<double>(r.source.malformed_records));
  w.sample("skewscope_events_lost_total", {{"reason", "pending_table_full"}},
           static_cast<double>(r.correlator.dropped_table_full));
  for (std::size_t i = 0; i < r.ingest.rejected.size(); ++i)
    w.sample("skewscope_events_lost_total",
             {{"reason", std::string("rejected_") + decode_reject_name(static_cast<DecodeReject>(i))}},
             static_cast<double>(r.ingest.rejected[i]));

  w.family("skewscope_domain_events_lost_total", "counter",
           "Halves lost in the kernel (ring buffer or in-flight table full), by the domain they came from; "
           "domain=\"\" is outside every declared domain. The rest of skewscope_events_lost_total for these "
           "reasons could not be attributed.");
  for (const auto& loss : r.domain_losses)
    w.sample("skewscope_domain_events_lost_total",
             {{"domain", loss.domain ? r.name(*loss.domain) : std::string()},
              {"reason", loss.ring_buffer_full ? "ring_buffer_full" : "inflight_table_full"}},
             static_cast<double>(loss.count));

  w.family("skewscope_ring_buffer_records_total", "counter",
           "Records through the ring buffer: submitted by the kernel side, read by the agent. Submitted plus "
           "lost{reason=\"ring_buffer_full\"} is everything the probes produced.");
  w.sample("skewscope_ring_buffer_records_total", {{"side", "submitted"}}, static_cast<double>(r.source.emitted));
  w.sample("skewscope_ring_buffer_records_total", {{"side", "read"}}, static_cast<double>(r.ingest.records));

  w.family("skewscope_events_filtered_total", "counter",
           "Halves deliberately not traced further: outside --only-domains, or traffic of this agent's own API.");
  w.sample("skewscope_events_filtered_total", {{"reason", "outside_domains"}},
           static_cast<double>(r.ingest.outside_domains));
  w.sample("skewscope_events_filtered_total", {{"reason", "own_traffic"}}, static_cast<double>(r.ingest.own_traffic));

  w.family("skewscope_unpaired_halves_total", "counter",
           "Halves that aged out unpaired: sends never received (within the age limit), receives that no send "
           "seen covers (an untraced sender, or its half lost). A receive in the middle of a larger send is not "
           "unpaired: see skewscope_continuation_receives_total.");
  w.sample("skewscope_unpaired_halves_total", {{"kind", "send"}}, static_cast<double>(r.correlator.sends_expired));
  w.sample("skewscope_unpaired_halves_total", {{"kind", "recv"}}, static_cast<double>(r.correlator.recvs_orphaned));
  w.family("skewscope_continuation_receives_total", "counter",
           "Receives that held only bytes of a send that started in an earlier receive (a message read in "
           "several reads): normal, never paired on their own.");
  w.sample("skewscope_continuation_receives_total",
           static_cast<double>(r.correlator.recvs_without_start - r.correlator.recvs_orphaned));

  w.family("skewscope_pending_halves", "gauge", "Halves waiting for their other half.");
  w.sample("skewscope_pending_halves", {{"kind", "send"}}, static_cast<double>(r.pending_sends));
  w.sample("skewscope_pending_halves", {{"kind", "recv"}}, static_cast<double>(r.pending_recvs));

  const std::uint64_t settled = r.correlator.pairs + r.correlator.sends_expired;
  w.family("skewscope_pairing_ratio", "gauge",
           "Of the sends that are settled (paired, or aged out unpaired), the share that paired.");
  if (settled)
    w.sample("skewscope_pairing_ratio", static_cast<double>(r.correlator.pairs) / static_cast<double>(settled));

  if (r.exchange) append_exchange_metrics(w, *r.exchange);
  if (r.payload) append_payload_metrics(w, *r.payload);
  if (r.nat) append_nat_metrics(w, *r.nat);
  if (r.otlp) append_otlp_metrics(w, *r.otlp);
  append_level_metrics(w, r);
  append_diagnosis_metrics(w, r.diagnosis);

  w.family("skewscope_build_info", "gauge", "Build information; always 1.");
  w.sample("skewscope_build_info", {{"version", version}}, 1);
  clocks::append_prometheus(r.clocks, out);
  append_process_metrics(read_process_usage(), out);
  return out;
}

}  // namespace skewscope
