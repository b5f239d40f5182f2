#include "api/rdma_json.hpp"

namespace skewscope {

nlohmann::json rdma_json(const RdmaReport& r) {
  using nlohmann::json;
  json kernel = json::object();
  for (unsigned i = 0; i < SKEWSCOPE_RDMA_CNT__COUNT; ++i) kernel[rdma_counter_name(i)] = r.source.kernel[i];
  const auto& p = r.pairing;
  const std::uint64_t settled = p.pairs + p.sends_expired;
  const auto& st = r.source.stamps;
  const json timestamps = {
      {"probe", st.probe},
      {"nic_completion", st.nic_completion},
      {"nic_wallclock", st.nic_wallclock},
      {"fallback", {{"no_clock", st.no_clock}, {"implausible", st.implausible}, {"not_read", st.not_read}}},
      {"clock_samples", {{"kept", st.clock_samples}, {"rejected", st.clock_samples_rejected}}},
      {"clocks", st.clocks},
      {"clocks_evicted", st.clocks_evicted}};
  json exchange = nullptr;
  if (r.exchange) {
    const auto& o = r.exchange->owner;
    exchange = {{"shipped", r.exchange->shipped},
                {"no_local_gid", r.exchange->no_local_gid},
                {"owner",
                 {{"sends", o.sends},
                  {"recvs", o.recvs},
                  {"pairs", o.pairs},
                  {"connects", o.connects},
                  {"unpaired_sends", o.sends_expired},
                  {"unpaired_recvs", o.recvs_expired},
                  {"superseded", o.superseded},
                  {"duplicates", o.duplicates},
                  {"dropped_table_full", o.dropped_table_full}}}};
  }
  return {
      {"probes",
       {{"library", r.source.library_probes},
        {"provider", r.source.provider_probes},
        {"extended", r.source.extended_probes},
        {"attach_failures", r.source.attach_failures},
        {"unresolved_functions", r.source.unresolved_functions},
        {"detached", r.source.detached}}},
      {"local_gids", {{"resolved", r.source.local_gids}, {"unknown", r.source.local_gid_unknown}}},
      {"extended_cqs", r.source.extended_cqs},
      {"timestamps", timestamps},
      {"exchange", exchange},
      {"kernel", kernel},
      {"malformed_records", r.source.malformed_records},
      {"outside_domains", r.outside_domains},
      {"connects", p.connects},
      {"untracked_connects", p.untracked_connects},
      {"sends", p.sends},
      {"recvs", p.recvs},
      {"pairs", p.pairs},
      {"unpaired_sends", p.sends_expired},
      {"unpaired_recvs", p.recvs_expired},
      {"no_connection", p.no_connection},
      {"superseded", p.superseded},
      {"duplicates", p.duplicates},
      {"dropped_table_full", p.dropped_table_full},
      {"pending_halves", r.pending_sends + r.pending_recvs},
      // "probe" while every half carries the probe's time; "probe+nic" once a receive half
      // carries a NIC completion stamp (extended CQs): see "timestamps" for how many.
      {"timestamp_source", st.nic_completion + st.nic_wallclock ? "probe+nic" : "probe"},
      {"pairing_ratio", settled ? json(static_cast<double>(p.pairs) / static_cast<double>(settled)) : json(nullptr)}};
}

}  // namespace skewscope
