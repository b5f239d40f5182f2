// Stage 1, the request producer: sends --count prompts (or --rate × --duration of them) at a
// fixed rate, then an end-of-stream marker. Prompts are a pure function of (--seed, id).
#include "stage.hpp"

#include <cerrno>
#include <cmath>
#include <ctime>

using namespace pipeline;

namespace {

std::string make_prompt(uint64_t seed, uint64_t id, int min_words, int max_words) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL ^ (id + 1) * 0xd1b54a32d192ed03ULL;
  const int n = min_words + static_cast<int>(splitmix64(state) % uint64_t(max_words - min_words + 1));
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string w = pseudo_word(splitmix64(state) % 512);
    if (i == 0) w[0] = static_cast<char>(w[0] - 'a' + 'A');
    if (!text.empty()) text += (splitmix64(state) % 9 == 0) ? ", " : " ";
    text += w;
  }
  return text + "?";
}

void sleep_until_mono(int64_t t_ns) {
  timespec ts{static_cast<time_t>(t_ns / 1'000'000'000), static_cast<long>(t_ns % 1'000'000'000)};
  while (!g_stop.load() && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  StageConfig cfg;
  cfg.name = "req";
  double rate = 100.0;
  long long count = -1;
  int64_t duration_ns = 0;
  uint64_t seed = 1;
  std::pair<int, int> words{8, 64};

  CLI::App app("Pipeline stage 1: rate-controlled request producer", "pipeline_request");
  add_stage_options(app, cfg, false, true);
  app.add_option("--rate", rate, "requests per second")->check(CLI::Range(0.001, 1e6));
  auto* count_opt = app.add_option("--count", count, "number of requests")->check(CLI::Range(0LL, 1LL << 40));
  auto* dur_opt = add_duration(app, "--duration", duration_ns, "send for this long: count = rate × duration");
  count_opt->excludes(dur_opt);
  dur_opt->excludes(count_opt);
  app.add_option("--seed", seed, "prompt content seed");
  app.add_option("--prompt-words", words, "MIN MAX words per prompt")->expected(2);
  parse_or_exit(app, argc, argv);
  check_endpoints_or_exit(app, cfg, false, true);
  if (count < 0 && duration_ns <= 0) {
    std::cerr << app.get_name() << ": one of --count or --duration (positive) is required\n";
    return 2;
  }
  if (words.first < 1 || words.second < words.first) {
    std::cerr << app.get_name() << ": --prompt-words needs 1 <= MIN <= MAX\n";
    return 2;
  }
  if (count < 0) count = std::llround(rate * static_cast<double>(duration_ns) / 1e9);

  return guarded_main([&] {
    install_signal_handlers();
    CsvLog log(cfg.log_path, "id,send_ns,raw_send_ns,out_bytes");
    auto out = open_sender(cfg.to_ep, cfg.transport);
    if (!out->wait_ready(static_cast<int>(cfg.ready_timeout_ns / 1'000'000)))
      throw std::runtime_error("output " + cfg.to + " not ready");
    touch(cfg.ready_path);

    Checksum sum;
    std::vector<int64_t> lateness;
    const double period_ns = 1e9 / rate;
    const int64_t t0 = monotonic_ns();
    int64_t last = t0;
    long long sent = 0;
    for (; sent < count && !g_stop.load(); ++sent) {
      const int64_t target = t0 + static_cast<int64_t>(static_cast<double>(sent) * period_ns);
      sleep_until_mono(target);
      if (g_stop.load()) break;
      Message m;
      m.h.id = static_cast<uint64_t>(sent);
      std::string prompt = make_prompt(seed, m.h.id, words.first, words.second);
      auto bytes = as_bytes(prompt);
      m.payload.assign(bytes.begin(), bytes.end());
      sum.add(m.h.id, m.payload);
      const int64_t raw_send = realtime_ns();
      m.h.stamps[kReqSend] = cfg.clock.app(raw_send);
      last = monotonic_ns();
      lateness.push_back(last - target);
      if (!out->send(m.encode(), cfg.idle_timeout_ns / 1'000'000)) break;
      log.row("%llu,%lld,%lld,%zu", static_cast<unsigned long long>(m.h.id),
              static_cast<long long>(m.h.stamps[kReqSend]), static_cast<long long>(raw_send), m.payload.size());
    }
    const bool complete = sent == count;
    bool eos_sent = false;
    if (complete) {
      Message eos;
      eos.h.id = static_cast<uint64_t>(sent);
      eos.h.flags = kFlagEndOfStream;
      eos_sent = out->send(eos.encode(), cfg.idle_timeout_ns / 1'000'000);
    }
    const long undelivered = out->close(static_cast<int>(cfg.linger_ns / 1'000'000));
    out.reset();
    finish_transports();

    nlohmann::json s;
    s["stage"] = cfg.name;
    s["transport"] = cfg.to_ep.transport_name();
    s["to"] = cfg.to;
    s["rate"] = rate;
    s["count"] = count;
    s["sent"] = sum.count;
    s["complete"] = complete;
    s["end_of_stream_sent"] = eos_sent;
    s["undelivered"] = undelivered;
    s["checksum_out"] = sum.hex();
    s["bytes_out"] = sum.bytes;
    const double elapsed = (last - t0) / 1e9;
    s["elapsed_seconds"] = elapsed;
    s["throughput_per_second"] = elapsed > 0 && sum.count > 1 ? nlohmann::json((sum.count - 1) / elapsed) : nullptr;
    s["schedule_lateness"] = distribution(lateness);
    s["clock_offset_seconds"] = cfg.clock.offset_ns / 1e9;
    s["clock_drift_ppm"] = cfg.clock.drift_ppm;
    write_text_file(cfg.summary_path, s.dump(2) + "\n");
    return ((complete && eos_sent) || g_stop.load()) && undelivered == 0 ? 0 : 1;
  });
}
