#include "api/status_json.hpp"
#include "api/rdma_json.hpp"

#include "api/payload_output.hpp"

#include "api/level_output.hpp"
#include "clocks/render.hpp"
#include "estimate/json.hpp"

namespace skewscope {

std::uint64_t total_lost(const AgentReport& r) { return lost_halves(r.source, r.correlator); }

namespace {
nlohmann::json health_json(const std::optional<int>& h) { return h ? nlohmann::json(*h) : nlohmann::json(nullptr); }
nlohmann::json seconds_json(const std::optional<std::int64_t>& ns) {
  return ns ? nlohmann::json(static_cast<double>(*ns) * 1e-9) : nlohmann::json(nullptr);
}
}  // namespace

namespace {

nlohmann::json exchange_json(const exchange::ExchangeReport& x) {
  using nlohmann::json;
  json dropped = json::object(), rejected = json::object();
  for (std::size_t i = 0; i < x.dropped.size(); ++i)
    dropped[exchange::drop_reason_name(static_cast<exchange::DropReason>(i))] = x.dropped[i];
  for (std::size_t i = 0; i < x.rejected.size(); ++i)
    rejected[exchange::record_reject_name(static_cast<exchange::RecordReject>(i))] = x.rejected[i];
  return {{"connected", x.connected},
          {"brokers", x.brokers},
          {"topic", x.topic},
          {"group", x.group},
          {"sample", "1/" + std::to_string(x.sample_one_in)},
          {"partitions", x.partitions},
          {"consumer_lag", x.consumer_lag ? json(*x.consumer_lag) : json(nullptr)},
          {"halves",
           {{"produced", x.halves_produced},
            {"consumed", x.halves_consumed},
            {"local", x.halves_local},
            {"sampled_out", x.halves_sampled_out}}},
          {"records", {{"produced", x.records_produced}, {"consumed", x.records_consumed}}},
          {"bytes_produced", x.bytes_produced},
          {"pairing_delay_seconds",
           {{"p50", x.pairing_delay_p50_seconds ? json(*x.pairing_delay_p50_seconds) : json(nullptr)},
            {"p99", x.pairing_delay_p99_seconds ? json(*x.pairing_delay_p99_seconds) : json(nullptr)}}},
          {"dropped", dropped},
          {"records_rejected", rejected},
          {"unpaired_sends", x.unpaired_sends},
          {"kafka",
           {{"halves_shipped", x.kafka_halves_shipped},
            {"produced_received", x.kafka_batches.produced},
            {"fetched_received", x.kafka_batches.fetched},
            {"pairs", x.kafka_batches.pairs},
            {"paired_records", x.kafka_batches.paired_records},
            {"unkeyed", x.kafka_batches.unkeyed},
            {"duplicates", x.kafka_batches.duplicates},
            {"table_full", x.kafka_batches.table_full},
            {"unpaired_produced", x.kafka_batches.unpaired_produced},
            {"unpaired_fetched", x.kafka_batches.unpaired_fetched}}},
          {"remote_domains", x.remote_domains},
          {"local_addresses", x.local_addresses},
          {"last_error", x.last_error.empty() ? json(nullptr) : json(x.last_error)}};
}

}  // namespace

nlohmann::json status_json(const AgentReport& r) {
  using nlohmann::json;
  const estimate::DomainName name = [&r](DomainId id) { return r.name(id); };
  json pairs = json::array();
  for (const auto& p : r.health.pairs) {
    json min_span = p.window.min_span_ns ? json(static_cast<double>(*p.window.min_span_ns) * 1e-9) : json(nullptr);
    pairs.push_back({{"src", r.name(p.key.src)},
                     {"dst", r.name(p.key.dst)},
                     {"transport", transport_name(p.key.transport)},
                     {"spans", p.spans},
                     {"negative_spans", p.negative_spans},
                     {"window_spans", p.window.spans},
                     {"window_negative_spans", p.window.negative_spans},
                     {"negative_span_ratio", p.negative_span_ratio},
                     {"health", health_json(p.health)},
                     {"state", pair_state_name(p.state)},
                     // Halves lost in the window, on any pair (losses are not attributable): while
                     // there are any, health is 0 (a violation seen) or null, never 1.
                     {"window_lost_halves", p.window_lost_halves},
                     {"capture_complete", p.capture_complete},
                     {"last_span_age_seconds", seconds_json(p.last_span_age_ns)},
                     {"min_span_seconds", min_span},
                     {"unexplained_negative_spans", p.unexplained_negative_spans}});
    // Offset fields are always present: an offset with its bound, or why there is none.
    pairs.back().update(estimate::offset_fields(nullptr));
    if (const auto* e = r.estimate_for(p.key.src, p.key.dst)) {
      json fields = estimate::to_json(*e, name);
      fields.erase("src");
      fields.erase("dst");
      pairs.back().update(fields);  // offset_seconds, offset_bound_seconds, delta_t_min_seconds, ...
    }
    pairs.back().update(level_fields(r, p));  // timestamp_source, levels
  }
  json domains = json::object();
  for (std::size_t i = 0; i < r.domain_clocks.size() && i < r.domain_names.size(); ++i) {
    const auto& c = r.domain_clocks[i];
    domains[r.domain_names[i]] = {
        {"status", std::string(clocks::to_string(r.clocks.status))},
        {"error_bound_seconds", c.error_bound_ns ? json(static_cast<double>(*c.error_bound_ns) * 1e-9) : json(nullptr)},
        {"simulated_offset_seconds",
         c.simulated_offset_ns ? json(static_cast<double>(*c.simulated_offset_ns) * 1e-9) : json(nullptr)},
        {"simulated_drift_ppm", c.simulated_offset_ns ? json(c.simulated_drift_ppm) : json(nullptr)}};
  }
  json lost_by_domain = json::object();  // kernel-side losses by the domain they came from
  for (const auto& loss : r.domain_losses) {
    auto& entry = lost_by_domain[loss.domain ? r.name(*loss.domain) : std::string()];
    entry[loss.ring_buffer_full ? "ring_buffer_full" : "inflight_table_full"] = loss.count;
  }
  const auto& c = r.correlator;
  const std::uint64_t settled = c.pairs + c.sends_expired;
  json capture = {
      {"up", r.health.capture_up},
      {"error", r.capture_error ? json(*r.capture_error) : json(nullptr)},
      {"window_lost_halves", r.health.window_lost_halves},
      {"events", r.ingest.sends + r.ingest.recvs},
      {"submitted", r.source.emitted},  // records the kernel side put in the ring buffer
      {"read", r.ingest.records},       // records the agent took out of it
      {"lost", total_lost(r)},
      {"lost_by_domain", lost_by_domain},
      {"pairs", c.pairs},
      {"unpaired_sends", c.sends_expired},
      {"pending_halves", r.pending_sends + r.pending_recvs},
      // Of the sends that are settled (paired or aged out), the share that paired.
      {"pairing_ratio", settled ? json(static_cast<double>(c.pairs) / static_cast<double>(settled)) : json(nullptr)}};
  return {{"health", health_json(r.health.health)},
          {"window_seconds", r.health.window_ns % 1'000'000'000 == 0
                                 ? json(r.health.window_ns / 1'000'000'000)
                                 : json(static_cast<double>(r.health.window_ns) * 1e-9)},
          {"pairs", pairs},
          {"capture", capture},
          {"clocks", {{"host", clocks::to_json(r.clocks)}, {"domains", domains}}},
          {"triangles", estimate::to_json(r.triangles, name)},
          {"estimate", estimate::to_json(r.estimate_counters)},
          {"exchange", r.exchange ? exchange_json(*r.exchange) : json(nullptr)},
          {"payload", r.payload ? payload_json(*r.payload) : json(nullptr)},
          {"wire", wire_json(r)},
          {"rdma", r.rdma ? rdma_json(*r.rdma) : json(nullptr)}};
}

}  // namespace skewscope
