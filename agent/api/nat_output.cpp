#include "api/nat_output.hpp"

#include <string>

namespace skewscope {

nlohmann::json nat_json(const NatReport& n) {
  using nlohmann::json;
  json namespaces = json::array();
  for (const auto& ns : n.watch.namespaces)
    namespaces.push_back({{"netns", ns.path},
                          {"datagrams", ns.datagrams},
                          {"entries", ns.entries},
                          {"overflows", ns.overflows},
                          {"dumps", ns.dumps},
                          {"dump_errors", ns.dump_errors}});
  json rejected = json::object();
  for (std::size_t i = 0; i < n.watch.rejected.size(); ++i)
    rejected[std::string(translate::to_string(static_cast<translate::ConntrackReject>(i)))] = n.watch.rejected[i];
  const auto& t = n.table;
  return {{"namespaces", namespaces},
          {"rejected", rejected},
          {"mappings", n.mappings},
          {"entries",
           {{"translated", t.entries_translated},
            {"plain", t.entries_plain},
            {"other_protocol", t.entries_other_protocol}}},
          {"destroyed", t.destroyed},
          {"expired", t.expired},
          {"evicted_full", t.evicted_full},
          {"halves_translated", t.halves_translated},
          {"hop_limit", t.hop_limit}};
}

void append_nat_metrics(PrometheusWriter& w, const NatReport& n) {
  w.family("skewscope_nat_mappings", "gauge",
           "Translated TCP connections (DNAT, SNAT, MASQUERADE) whose halves' keys are mapped to the other end's.");
  w.sample("skewscope_nat_mappings", static_cast<double>(n.mappings));
  w.family("skewscope_nat_entries_total", "counter",
           "Conntrack entries read from the watched namespaces, by what they were: translated (learnt), plain "
           "(no translation), other_protocol.");
  w.sample("skewscope_nat_entries_total", {{"kind", "translated"}}, static_cast<double>(n.table.entries_translated));
  w.sample("skewscope_nat_entries_total", {{"kind", "plain"}}, static_cast<double>(n.table.entries_plain));
  w.sample("skewscope_nat_entries_total", {{"kind", "other_protocol"}},
           static_cast<double>(n.table.entries_other_protocol));
  w.family("skewscope_nat_halves_translated_total", "counter", "Halves whose key was mapped through a translation.");
  w.sample("skewscope_nat_halves_translated_total", static_cast<double>(n.table.halves_translated));
  w.family("skewscope_nat_evictions_total", "counter",
           "Mappings dropped: full (the table was full; their remaining halves do not pair), expired (after "
           "the connection ended).");
  w.sample("skewscope_nat_evictions_total", {{"reason", "full"}}, static_cast<double>(n.table.evicted_full));
  w.sample("skewscope_nat_evictions_total", {{"reason", "expired"}}, static_cast<double>(n.table.expired));
  w.family("skewscope_nat_event_overflows_total", "counter",
           "Times a watched namespace's conntrack socket overflowed (events lost; the table is dumped again).");
  for (const auto& ns : n.watch.namespaces)
    w.sample("skewscope_nat_event_overflows_total", {{"netns", ns.path}}, static_cast<double>(ns.overflows));
  w.family("skewscope_nat_rejected_total", "counter", "Conntrack messages that could not be decoded, by reason.");
  for (std::size_t i = 0; i < n.watch.rejected.size(); ++i)
    w.sample("skewscope_nat_rejected_total",
             {{"reason", translate::to_string(static_cast<translate::ConntrackReject>(i))}},
             static_cast<double>(n.watch.rejected[i]));
}

}  // namespace skewscope
