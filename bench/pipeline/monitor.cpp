// Stage 5, the monitor: the pipeline's sink. Counts and checksums the results, checks that
// every request arrived exactly once, and computes the app-level span of every hop from the
// stamps the stages wrote (each in its own app-level clock, as a tracing system would).
#include "stage.hpp"

#include <unordered_set>

using namespace pipeline;

namespace {

struct Hop {
  const char* src;
  const char* dst;
  Slot send, recv;
};
constexpr Hop kHops[] = {{"req", "pre", kReqSend, kPreRecv},
                         {"pre", "infer", kPreSend, kInferRecv},
                         {"infer", "post", kInferSend, kPostRecv},
                         {"post", "mon", kPostSend, kMonRecv}};

}  // namespace

int main(int argc, char** argv) {
  StageConfig cfg;
  cfg.name = "mon";
  long long expect = -1;
  CLI::App app("Pipeline stage 5: result sink, completeness and app-level hop spans", "pipeline_monitor");
  add_stage_options(app, cfg, true, false);
  app.add_option("--expect", expect, "fail unless exactly this many results arrive")->check(CLI::Range(0LL, 1LL << 40));
  parse_or_exit(app, argc, argv);
  check_endpoints_or_exit(app, cfg, true, false);

  return guarded_main([&] {
    install_signal_handlers();
    std::string header = "id";
    for (const char* s : kSlotNames) header += std::string(",") + s;
    header += ",raw_mon_recv,out_hash";
    CsvLog log(cfg.log_path, header.c_str());
    auto in = open_receiver(cfg.from_ep, cfg.transport);
    if (!in->wait_ready(static_cast<int>(cfg.ready_timeout_ns / 1'000'000)))
      throw std::runtime_error("input " + cfg.from + " not ready");
    touch(cfg.ready_path);

    Checksum sum;
    std::unordered_set<uint64_t> seen;
    uint64_t bad = 0, duplicates = 0, unstamped = 0, eos_count = 0;
    bool eos = false;
    std::string stopped_by = "signal";
    std::vector<int64_t> spans[std::size(kHops)], end_to_end;
    uint64_t negative[std::size(kHops)] = {};
    int64_t first_mono = 0, last_mono = 0, last_activity = monotonic_ns();
    std::vector<std::byte> buf;
    while (!g_stop.load()) {
      if (!in->receive(buf, 100)) {
        if (monotonic_ns() - last_activity > cfg.idle_timeout_ns) {
          stopped_by = "idle";
          break;
        }
        continue;
      }
      const int64_t raw_recv = realtime_ns();
      const int64_t mono = monotonic_ns();
      last_activity = mono;
      auto m = Message::decode(buf);
      if (!m) {
        ++bad;
        continue;
      }
      if (m->end_of_stream()) {
        eos = true;
        eos_count = m->h.id;
        stopped_by = "eos";
        break;
      }
      if (first_mono == 0) first_mono = mono;
      last_mono = mono;
      m->h.stamps[kMonRecv] = cfg.clock.app(raw_recv);
      if (!seen.insert(m->h.id).second) {
        ++duplicates;
        continue;
      }
      const uint64_t h = sum.add(m->h.id, m->payload);
      const int64_t* st = m->h.stamps;
      bool complete = true;
      for (int s = 0; s < kSlots; ++s) complete = complete && st[s] != 0;
      if (!complete) {
        ++unstamped;
      } else {
        for (size_t k = 0; k < std::size(kHops); ++k) {
          const int64_t span = st[kHops[k].recv] - st[kHops[k].send];
          spans[k].push_back(span);
          if (span < 0) ++negative[k];
        }
        end_to_end.push_back(st[kMonRecv] - st[kReqSend]);
      }
      std::string row = std::to_string(m->h.id);
      for (int s = 0; s < kSlots; ++s) row += "," + std::to_string(st[s]);
      char tail[64];
      std::snprintf(tail, sizeof tail, ",%lld,%016llx", static_cast<long long>(raw_recv),
                    static_cast<unsigned long long>(h));
      log.row("%s%s", row.c_str(), tail);
    }
    in.reset();
    finish_transports();

    const uint64_t expected = expect >= 0 ? static_cast<uint64_t>(expect) : eos_count;
    const bool know_expected = expect >= 0 || eos;
    nlohmann::json s;
    s["stage"] = cfg.name;
    s["transport"] = cfg.from_ep.transport_name();
    s["from"] = cfg.from;
    s["received"] = sum.count;
    s["expected"] = know_expected ? nlohmann::json(expected) : nlohmann::json(nullptr);
    s["missing"] =
        know_expected && expected >= sum.count ? nlohmann::json(expected - sum.count) : nlohmann::json(nullptr);
    s["duplicates"] = duplicates;
    s["bad_messages"] = bad;
    s["unstamped"] = unstamped;
    s["end_of_stream"] = eos;
    s["stopped_by"] = stopped_by;
    s["checksum_in"] = sum.hex();
    s["bytes_in"] = sum.bytes;
    const double elapsed = last_mono > first_mono ? (last_mono - first_mono) / 1e9 : 0.0;
    s["elapsed_seconds"] = elapsed;
    s["throughput_per_second"] = elapsed > 0 && sum.count > 1 ? nlohmann::json((sum.count - 1) / elapsed) : nullptr;
    s["clock_offset_seconds"] = cfg.clock.offset_ns / 1e9;
    s["clock_drift_ppm"] = cfg.clock.drift_ppm;
    nlohmann::json hops = nlohmann::json::array();
    for (size_t k = 0; k < std::size(kHops); ++k) {
      nlohmann::json h = distribution(spans[k]);
      h["src"] = kHops[k].src;
      h["dst"] = kHops[k].dst;
      h["spans"] = spans[k].size();
      h["negative_spans"] = negative[k];
      h["negative_span_ratio"] =
          spans[k].empty() ? nlohmann::json(nullptr) : nlohmann::json(double(negative[k]) / spans[k].size());
      hops.push_back(h);
    }
    s["hops"] = hops;
    s["end_to_end"] = distribution(end_to_end);
    write_text_file(cfg.summary_path, s.dump(2) + "\n");
    const bool ok = stopped_by == "signal" || (know_expected && sum.count == expected && duplicates == 0 && bad == 0 &&
                                               unstamped == 0 && (expect < 0 || !eos || eos_count == expected));
    return ok ? 0 : 1;
  });
}
