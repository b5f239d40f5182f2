#include "api/status_json.hpp"
#include "api/diagnosis_output.hpp"
#include "api/family_output.hpp"
#include "api/rdma_json.hpp"

#include "api/nat_output.hpp"
#include "api/otlp_output.hpp"
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

// How well CLOCK_MONOTONIC stamps are placed on CLOCK_REALTIME (capture/clock_mapping.hpp).
nlohmann::json realtime_mapping_json(const MonotonicToRealtime::Stats& s) {
  return {{"readings", s.readings}, {"steps", s.steps}, {"uncertainty_ns", s.uncertainty_ns}};
}

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
          {"realtime_mapping", realtime_mapping_json(x.realtime_mapping)},
          {"halves",
           {{"produced", x.halves_produced},
            {"consumed", x.halves_consumed},
            {"local", x.halves_local},
            {"sampled_out", x.halves_sampled_out}}},
          {"records", {{"produced", x.records_produced}, {"consumed", x.records_consumed}}},
          {"spans_paired", x.spans_paired},
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
          {"zmtp",  // ZeroMQ message halves received from the exchange and paired here
           {{"send_received", x.zmtp_messages.sends},
            {"recv_received", x.zmtp_messages.recvs},
            {"pairs", x.zmtp_messages.pairs},
            {"duplicates", x.zmtp_messages.duplicates},
            {"table_full", x.zmtp_messages.table_full},
            {"unpaired_sends", x.zmtp_messages.unpaired_sends},
            {"unpaired_recvs", x.zmtp_messages.unpaired_recvs}}},
          {"nat",  // translations from routers: shipped by this agent, held and applied here
           {{"translations_shipped", x.nat.translations_shipped},
            {"translations_outbox_full", x.nat.translations_outbox_full},
            {"translations", x.nat.translations},
            {"received", x.nat.owner.received},
            {"evicted_full", x.nat.owner.evicted_full},
            {"expired", x.nat.owner.expired},
            {"outside_window", x.nat.owner.outside_window},
            {"halves_forwarded", x.nat.owner.halves_forwarded},
            {"halves_taken_back", x.nat.owner.halves_taken_back}}},
          {"remote_domains", x.remote_domains},
          {"trust",  // docs/security.md
           {{"insecure", x.insecure},
            {"key_ids", x.key_ids},
            {"key_reload_failures", x.key_reload_failures},
            {"domains_bound", x.domains_bound},
            {"signers", x.signers}}},
          {"local_addresses", x.local_addresses},
          {"last_error", x.last_error.empty() ? json(nullptr) : json(x.last_error)}};
}

}  // namespace

std::string health_reason(const AgentReport& r) {
  const HealthReport& h = r.health;
  switch (h.unknown_reason) {
    case UnknownReason::none: return {};
    case UnknownReason::capture_down:
      return "unknown: capture down" + (r.capture_error ? " (" + *r.capture_error + ")" : std::string());
    case UnknownReason::halves_lost:
      return "unknown: " + std::to_string(h.window_lost_halves) + " halves lost in the window";
    case UnknownReason::halves_unpaired: {
      // The worst domain below the floor names the share; every such domain is listed.
      std::uint64_t paired = 0, unpaired = 0;
      std::string domains;
      for (const auto& d : h.pairing) {
        if (!d.below_floor) continue;
        paired += d.paired_halves;
        unpaired += d.unpaired_halves;
        domains += (domains.empty() ? "" : ", ") + r.name(d.domain) + " " + std::to_string(d.unpaired_halves) + " of " +
                   std::to_string(d.paired_halves + d.unpaired_halves);
      }
      const auto percent = static_cast<int>(100.0 * static_cast<double>(unpaired) /
                                            static_cast<double>(std::max<std::uint64_t>(1, paired + unpaired)));
      return "unknown: " + std::to_string(percent) + "% of halves unpaired in the window (" + domains + ")";
    }
    case UnknownReason::no_spans:
    case UnknownReason::window_filling:
    case UnknownReason::no_pairs: return "unknown: no pair has a span (or a known health) in the window";
  }
  return {};
}

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
                     {"unknown_reason", p.health ? json(nullptr) : json(unknown_reason_name(p.unknown_reason))},
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
    // Why it broke and whose clock it is (docs/diagnosis.md), per pair of hosts.
    pairs.back()["diagnosis"] = pair_diagnosis_json(r.diagnosis, r.name(p.key.src), r.name(p.key.dst));
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
  json rejected_halves = json::object();
  for (std::size_t i = 0; i < r.ingest.rejected.size(); ++i)
    rejected_halves[decode_reject_name(static_cast<DecodeReject>(i))] = r.ingest.rejected[i];
  const auto& c = r.correlator;
  const std::uint64_t settled = c.pairs + c.sends_expired;
  json pairing_domains = json::object();
  for (const auto& d : r.health.pairing)
    pairing_domains[r.name(d.domain)] = {{"paired_halves", d.paired_halves},
                                         {"unpaired_halves", d.unpaired_halves},
                                         {"ratio", d.ratio()},
                                         {"below_floor", d.below_floor}};
  json window_pairing = {{"floor", r.pairing_floor.min_ratio},
                         {"min_halves", r.pairing_floor.min_halves},
                         {"captured_addresses", r.captured_addresses},
                         {"addresses_not_learned", r.addresses_not_learned},
                         {"domains", pairing_domains}};
  json capture = {
      {"up", r.health.capture_up},
      {"error", r.capture_error ? json(*r.capture_error) : json(nullptr)},
      {"window_lost_halves", r.health.window_lost_halves},
      {"events", r.ingest.sends + r.ingest.recvs},
      {"submitted", r.source.emitted},  // records the kernel side put in the ring buffer
      {"read", r.ingest.records},       // records the agent took out of it
      {"lost", total_lost(r)},
      {"lost_by_domain", lost_by_domain},
      {"rejected", rejected_halves},  // records that could not become a half, by reason
      {"pairs", c.pairs},
      {"unpaired_sends", c.sends_expired},
      {"sends_cut_short", r.source.send_cut_short},          // emitted at their start, then moved fewer bytes
      {"sends_without_slot", r.source.send_slot_fallbacks},  // no send-table slot: the slower task-local path
      {"unpaired_recvs", c.recvs_orphaned},
      {"continuation_recvs", c.recvs_without_start - c.recvs_orphaned},
      {"pending_halves", r.pending_sends + r.pending_recvs},
      // Of the sends that are settled (paired or aged out), the share that paired.
      {"pairing_ratio", settled ? json(static_cast<double>(c.pairs) / static_cast<double>(settled)) : json(nullptr)},
      {"window_pairing", window_pairing}};
  json core_mapping = realtime_mapping_json(r.realtime_mapping);
  core_mapping["steps_watched"] = r.clock_steps_watched ? json(*r.clock_steps_watched) : json(nullptr);
  const std::string reason = health_reason(r);
  return {{"health", health_json(r.health.health)},
          {"unknown_reason", r.health.health ? json(nullptr) : json(unknown_reason_name(r.health.unknown_reason))},
          {"health_reason", reason.empty() ? json(nullptr) : json(reason)},
          {"window_seconds", r.health.window_ns % 1'000'000'000 == 0
                                 ? json(r.health.window_ns / 1'000'000'000)
                                 : json(static_cast<double>(r.health.window_ns) * 1e-9)},
          {"pairs", pairs},
          {"capture", capture},
          {"clocks", {{"host", clocks::to_json(r.clocks)}, {"domains", domains}, {"realtime_mapping", core_mapping}}},
          {"triangles", estimate::to_json(r.triangles, name)},
          {"estimate", estimate::to_json(r.estimate_counters)},
          {"exchange", r.exchange ? exchange_json(*r.exchange) : json(nullptr)},
          {"payload", r.payload ? payload_json(*r.payload, r.domain_names) : json(nullptr)},
          {"wire", wire_json(r)},
          {"rdma", r.rdma ? rdma_json(*r.rdma) : json(nullptr)},
          {"nat", r.nat ? nat_json(*r.nat) : json(nullptr)},
          {"otlp", r.otlp ? otlp_json(*r.otlp) : json(nullptr)},
          {"capture_families", capture_families_json(r.capture_families)},
          {"incidents", r.diagnosis.incidents},
          {"hosts", hosts_json(r.diagnosis)}};
}

}  // namespace skewscope
