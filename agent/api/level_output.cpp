#include "api/level_output.hpp"

#include "estimate/json.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {
namespace {

using nlohmann::json;

json seconds(const std::optional<std::int64_t>& ns) {
  return ns ? json(static_cast<double>(*ns) * 1e-9) : json(nullptr);
}
json seconds(const std::optional<double>& ns) { return ns ? json(*ns * 1e-9) : json(nullptr); }

json level_json(TimestampSource source, const PairReport& p, const estimate::PairEstimate* e,
                std::int64_t mapping_uncertainty_ns) {
  json j = {{"timestamp_source", timestamp_source_name(source)},
            {"spans", p.spans},
            {"negative_spans", p.negative_spans},
            {"window_spans", p.window.spans},
            {"window_negative_spans", p.window.negative_spans},
            {"min_span_seconds", seconds(p.window.min_span_ns)},
            {"health", p.health ? json(*p.health) : json(nullptr)},
            {"state", pair_state_name(p.state)},
            {"delta_t_min_seconds", seconds(e ? e->dt_min_ns : std::nullopt)},
            {"offset_lower_bound_seconds", seconds(e ? e->lower_ns : std::nullopt)},
            {"offset_upper_bound_seconds", seconds(e ? e->upper_ns : std::nullopt)},
            {"mapping_uncertainty_seconds", static_cast<double>(mapping_uncertainty_ns) * 1e-9}};
  json offset = estimate::offset_fields(e);
  for (const char* k : {"offset_seconds", "offset_bound_seconds", "offset_missing"}) j[k] = offset[k];
  return j;
}

const estimate::PairEstimate* estimate_of(const LevelPair& l) { return l.estimate ? &*l.estimate : nullptr; }

}  // namespace

json level_fields(const AgentReport& r, const PairReport& pair) {
  json levels = json::array();
  levels.push_back(level_json(TimestampSource::syscall, pair, r.estimate_for(pair.key.src, pair.key.dst), 0));
  for (const auto& l : r.wire.pairs)
    if (l.pair.key == pair.key)
      levels.push_back(level_json(l.source, l.pair, estimate_of(l), l.mapping_uncertainty_ns));
  const LevelPair* best = best_level(r.wire.pairs, pair.key);
  return {{"timestamp_source", timestamp_source_name(best ? best->source : TimestampSource::syscall)},
          {"levels", levels}};
}

json wire_json(const AgentReport& r) {
  const WireReport& w = r.wire;
  if (!w.enabled) return nullptr;
  json interfaces = json::array();
  for (const auto& i : w.interfaces)
    interfaces.push_back({{"name", i.name},
                          {"created_qdisc", i.created_qdisc},
                          {"phc_index", i.phc_index >= 0 ? json(i.phc_index) : json(nullptr)},
                          {"hardware_capable", i.hardware_capable}});
  auto level = [](const WireLevelCounters& c) {
    const std::uint64_t settled = c.pairs + c.sends_expired;
    return json{
        {"pairs", c.pairs},
        {"sends", c.sends},
        {"recvs", c.recvs},
        {"unpaired_sends", c.sends_expired},
        {"pending_halves", c.pending},
        {"pending_table_full", c.dropped_table_full},
        {"pairing_ratio", settled ? json(static_cast<double>(c.pairs) / static_cast<double>(settled)) : json(nullptr)}};
  };
  return {{"send_path", w.send_path},
          {"error", w.error.empty() ? json(nullptr) : json(w.error)},
          {"receive_stamps_held", w.rx_timestamps_held},
          {"interfaces", interfaces},
          {"segments", w.segments},
          {"receive_stamps", {{"kernel", w.rx_skb_stamped}, {"program", w.rx_unstamped}, {"hardware", w.hw_stamped}}},
          {"lost",
           {{"ring_buffer_full", w.ring_buffer_full},
            {"not_parsed", w.not_parsed},
            {"malformed_record", w.malformed_records},
            {"pending_table_full", w.software.dropped_table_full}}},
          {"hardware_unmapped", w.hw_unmapped},
          {"rejected", w.rejected},
          {"outside_domains", w.outside_domains},
          {"own_traffic", w.own_traffic},
          {"levels", {{"wire_software", level(w.software)}, {"wire_hardware", level(w.hardware)}}},
          {"ack_samples", w.ack_samples ? level(w.acks) : json(nullptr)}};
}

void append_level_metrics(PrometheusWriter& w, const AgentReport& r) {
  if (!r.wire.enabled) return;
  struct Row {
    const PairReport* pair;
    TimestampSource source;
    const estimate::PairEstimate* estimate;
  };
  std::vector<Row> rows;
  for (const auto& p : r.health.pairs)
    if (p.key.transport == Transport::tcp)
      rows.push_back({&p, TimestampSource::syscall, r.estimate_for(p.key.src, p.key.dst)});
  for (const auto& l : r.wire.pairs) rows.push_back({&l.pair, l.source, estimate_of(l)});
  auto labels_of = [&r](const Row& row) {
    return std::array<std::string, 3>{r.name(row.pair->key.src), r.name(row.pair->key.dst),
                                      timestamp_source_name(row.source)};
  };
#define LEVEL_LABELS(l)                                        \
  {                                                            \
    {"src", l[0]}, {"dst", l[1]}, { "timestamp_source", l[2] } \
  }
  w.family("skewscope_level_spans_total", "counter",
           "TCP spans per timestamp level: syscall (send entry, receive exit), wire_software, wire_hardware.");
  for (const auto& row : rows) {
    auto l = labels_of(row);
    w.sample("skewscope_level_spans_total", LEVEL_LABELS(l), static_cast<double>(row.pair->spans));
  }
  w.family("skewscope_level_negative_spans_total", "counter", "Negative TCP spans per timestamp level.");
  for (const auto& row : rows) {
    auto l = labels_of(row);
    w.sample("skewscope_level_negative_spans_total", LEVEL_LABELS(l), static_cast<double>(row.pair->negative_spans));
  }
  w.family("skewscope_level_delta_t_min_seconds", "gauge",
           "Half the minimum round trip of the pair, from the spans of one timestamp level.");
  for (const auto& row : rows)
    if (row.estimate && row.estimate->dt_min_ns) {
      auto l = labels_of(row);
      w.sample("skewscope_level_delta_t_min_seconds", LEVEL_LABELS(l), *row.estimate->dt_min_ns * 1e-9);
    }
  w.family("skewscope_level_clock_offset_seconds", "gauge",
           "dst-minus-src clock offset from one timestamp level's spans; only when settled (as the pair's).");
  w.family("skewscope_level_clock_offset_bound_seconds", "gauge",
           "Half-width of that level's offset interval (hardware: widened by the PHC mapping's uncertainty).");
  for (const auto& row : rows) {
    const auto shown = estimate::shown_offset(row.estimate);
    if (!shown.offset_ns) continue;
    auto l = labels_of(row);
    w.sample("skewscope_level_clock_offset_seconds", LEVEL_LABELS(l), *shown.offset_ns * 1e-9);
    w.sample("skewscope_level_clock_offset_bound_seconds", LEVEL_LABELS(l), *shown.bound_ns * 1e-9);
  }
  w.family("skewscope_pair_timestamp_source", "gauge",
           "1 for the timestamp level a pair's health uses: the best one that has paired its traffic.");
  for (const auto& p : r.health.pairs) {
    if (p.key.transport != Transport::tcp) continue;
    const LevelPair* best = best_level(r.wire.pairs, p.key);
    w.sample("skewscope_pair_timestamp_source",
             {{"src", r.name(p.key.src)},
              {"dst", r.name(p.key.dst)},
              {"timestamp_source", timestamp_source_name(best ? best->source : TimestampSource::syscall)}},
             1);
  }
#undef LEVEL_LABELS
  const WireReport& x = r.wire;
  w.family("skewscope_wire_segments_total", "counter", "TCP segments with payload read from the wire programs.");
  w.sample("skewscope_wire_segments_total", static_cast<double>(x.segments));
  w.family("skewscope_wire_receive_stamps_total", "counter",
           "Received segments by stamp: kernel (skb receive stamp), program (no receive stamp: the tc "
           "program's time), hardware (NIC stamp present).");
  w.sample("skewscope_wire_receive_stamps_total", {{"stamp", "kernel"}}, static_cast<double>(x.rx_skb_stamped));
  w.sample("skewscope_wire_receive_stamps_total", {{"stamp", "program"}}, static_cast<double>(x.rx_unstamped));
  w.sample("skewscope_wire_receive_stamps_total", {{"stamp", "hardware"}}, static_cast<double>(x.hw_stamped));
  w.family("skewscope_wire_events_lost_total", "counter", "Wire halves lost or left without a level, by reason.");
  w.sample("skewscope_wire_events_lost_total", {{"reason", "ring_buffer_full"}},
           static_cast<double>(x.ring_buffer_full));
  w.sample("skewscope_wire_events_lost_total", {{"reason", "not_parsed"}}, static_cast<double>(x.not_parsed));
  w.sample("skewscope_wire_events_lost_total", {{"reason", "malformed_record"}},
           static_cast<double>(x.malformed_records));
  w.sample("skewscope_wire_events_lost_total", {{"reason", "pending_table_full"}},
           static_cast<double>(x.software.dropped_table_full));
  w.sample("skewscope_wire_events_lost_total", {{"reason", "hardware_unmapped"}}, static_cast<double>(x.hw_unmapped));
}

}  // namespace skewscope
