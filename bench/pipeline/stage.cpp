#include "stage.hpp"

#include <algorithm>
#include <cstdarg>
#include <iostream>
#include <stdexcept>

namespace pipeline {

void add_stage_options(CLI::App& app, StageConfig& cfg, bool has_from, bool has_to) {
  if (has_from)
    app.add_option("--from", cfg.from, "input: tcp://ADDR:PORT (binds) or kafka://BOOTSTRAP/TOPIC")->required();
  if (has_to)
    app.add_option("--to", cfg.to, "output: tcp://ADDR:PORT (connects) or kafka://BOOTSTRAP/TOPIC")->required();
  app.add_option("--kafka-opt", cfg.transport.kafka_opts, "librdkafka KEY=VALUE (repeatable)");
  app.add_option("--log", cfg.log_path, "per-message CSV log");
  app.add_option("--summary", cfg.summary_path, "JSON summary written at exit (default stdout)");
  app.add_option("--ready-file", cfg.ready_path, "file created once the transports are ready");
  add_duration(app, "--idle-timeout", cfg.idle_timeout_ns,
               "stop when no message arrives, or the next stage takes none, for this long (default 30s)");
  add_duration(app, "--ready-timeout", cfg.ready_timeout_ns,
               "fail when the transports are not ready by then (default 30s)");
  cfg.clock.add_options(app);
}

void check_endpoints_or_exit(CLI::App& app, StageConfig& cfg, bool has_from, bool has_to) {
  auto check = [&](const std::string& flag, const std::string& url, Endpoint& out) {
    auto ep = parse_endpoint(url);
    if (!ep) {
      std::cerr << app.get_name() << ": " << flag << " '" << url
                << "' is neither tcp://ADDR:PORT nor kafka://BOOTSTRAP/TOPIC\n";
      std::exit(2);
    }
    out = *ep;
  };
  if (has_from) check("--from", cfg.from, cfg.from_ep);
  if (has_to) check("--to", cfg.to, cfg.to_ep);
  if (cfg.idle_timeout_ns <= 0 || cfg.ready_timeout_ns <= 0) {
    std::cerr << app.get_name() << ": timeouts must be positive\n";
    std::exit(2);
  }
  cfg.transport.client_id = "pipeline-" + cfg.name;
}

nlohmann::json distribution(std::vector<int64_t> ns) {
  nlohmann::json j;
  if (ns.empty()) {
    for (const char* k : {"min_seconds", "p50_seconds", "p99_seconds", "max_seconds"}) j[k] = nullptr;
    return j;
  }
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[static_cast<size_t>(q * static_cast<double>(ns.size() - 1))] / 1e9; };
  j["min_seconds"] = ns.front() / 1e9;
  j["p50_seconds"] = at(0.5);
  j["p99_seconds"] = at(0.99);
  j["max_seconds"] = ns.back() / 1e9;
  return j;
}

CsvLog::CsvLog(const std::string& path, const char* header) {
  if (path.empty()) return;
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) throw std::runtime_error("cannot write " + path);
  std::fprintf(f_, "%s\n", header);
}
CsvLog::~CsvLog() {
  if (f_) std::fclose(f_);
}
void CsvLog::row(const char* fmt, ...) {
  if (!f_) return;
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(f_, fmt, ap);
  va_end(ap);
  std::fputc('\n', f_);
}

int run_stage(StageConfig& cfg, Slot recv_slot, Slot send_slot, const Transform& transform,
              const std::function<void(nlohmann::json&)>& extra) {
  install_signal_handlers();
  CsvLog log(cfg.log_path, "id,recv_ns,send_ns,raw_recv_ns,raw_send_ns,out_bytes");
  auto in = open_receiver(cfg.from_ep, cfg.transport);
  auto out = open_sender(cfg.to_ep, cfg.transport);
  const int ready_ms = static_cast<int>(cfg.ready_timeout_ns / 1'000'000);
  if (!in->wait_ready(ready_ms)) throw std::runtime_error("input " + cfg.from + " not ready");
  if (!out->wait_ready(ready_ms)) throw std::runtime_error("output " + cfg.to + " not ready");
  touch(cfg.ready_path);

  Checksum sum_in, sum_out;
  uint64_t bad = 0, expected = 0;
  bool eos = false;
  std::string stopped_by = "signal";
  std::vector<int64_t> work_ns;
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
    const int64_t mono_recv = monotonic_ns();
    last_activity = mono_recv;
    auto msg = Message::decode(buf);
    if (!msg) {
      ++bad;
      continue;
    }
    if (msg->end_of_stream()) {
      eos = true;
      expected = msg->h.id;
      stopped_by = out->send(msg->encode(), cfg.idle_timeout_ns / 1'000'000) ? "eos" : "blocked";
      break;
    }
    if (first_mono == 0) first_mono = mono_recv;
    msg->h.stamps[recv_slot] = cfg.clock.app(raw_recv);
    sum_in.add(msg->h.id, msg->payload);

    msg->payload = transform(msg->h.id, msg->payload);
    sum_out.add(msg->h.id, msg->payload);

    const int64_t raw_send = realtime_ns();
    msg->h.stamps[send_slot] = cfg.clock.app(raw_send);
    work_ns.push_back(raw_send - raw_recv);
    if (!out->send(msg->encode(), cfg.idle_timeout_ns / 1'000'000)) {
      stopped_by = g_stop.load() ? "signal" : "blocked";  // the next stage took nothing for that long
      break;
    }
    last_mono = monotonic_ns();
    log.row("%llu,%lld,%lld,%lld,%lld,%zu", static_cast<unsigned long long>(msg->h.id),
            static_cast<long long>(msg->h.stamps[recv_slot]), static_cast<long long>(msg->h.stamps[send_slot]),
            static_cast<long long>(raw_recv), static_cast<long long>(raw_send), msg->payload.size());
  }

  const long undelivered = out->close(static_cast<int>(cfg.linger_ns / 1'000'000));
  out.reset();
  in.reset();
  finish_transports();

  nlohmann::json s;
  s["stage"] = cfg.name;
  s["transport"] = cfg.from_ep.transport_name();
  s["from"] = cfg.from;
  s["to"] = cfg.to;
  s["received"] = sum_in.count;
  s["sent"] = sum_out.count;
  s["bad_messages"] = bad;
  s["end_of_stream"] = eos;
  s["expected"] = eos ? nlohmann::json(expected) : nlohmann::json(nullptr);
  s["stopped_by"] = stopped_by;
  s["undelivered"] = undelivered;
  s["checksum_in"] = sum_in.hex();
  s["checksum_out"] = sum_out.hex();
  s["bytes_in"] = sum_in.bytes;
  s["bytes_out"] = sum_out.bytes;
  const double elapsed = last_mono > first_mono ? (last_mono - first_mono) / 1e9 : 0.0;
  s["elapsed_seconds"] = elapsed;
  s["throughput_per_second"] =
      elapsed > 0 && sum_out.count > 1 ? nlohmann::json((sum_out.count - 1) / elapsed) : nullptr;
  s["work"] = distribution(work_ns);
  s["clock_offset_seconds"] = cfg.clock.offset_ns / 1e9;
  s["clock_drift_ppm"] = cfg.clock.drift_ppm;
  if (extra) extra(s);
  write_text_file(cfg.summary_path, s.dump(2) + "\n");
  // A signal is an orderly stop; anything else short of a complete stream is a failure.
  const bool ok = stopped_by == "signal" || (eos && bad == 0 && undelivered == 0 && sum_in.count == expected);
  return ok ? 0 : 1;
}

int guarded_main(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    fatal(e.what());
  }
}

}  // namespace pipeline
