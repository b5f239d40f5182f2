// skewscope_clocks_probe: runs the clock stage on its own and prints what it sees, one snapshot
// per poll. For the ptp4l integration test and for looking at a host by hand; the agent's
// `skewscope clocks` command renders the same snapshot.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "clocks/clock_monitor.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: skewscope_clocks_probe [--ptp4l-socket PATH]... [--client-dir DIR] [--stale-after-ms N]\n"
               "         [--timeout-ms N] [--max-drift-ppm X] [--domain N] [--count N] [--interval-ms N]\n"
               "         [--json | --prometheus | --table]\n"
               "  --count 0 polls forever; --json prints one JSON object per line.\n");
  return 2;
}

bool parse_long(const char* s, long& out) {
  char* end = nullptr;
  out = std::strtol(s, &end, 10);
  return end != s && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  using namespace skewscope::clocks;
  ClockConfig cfg;
  long count = 1, interval_ms = 1000;
  enum { kTable, kJson, kPrometheus } format = kTable;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    long n = 0;
    if (a == "--json")
      format = kJson;
    else if (a == "--prometheus")
      format = kPrometheus;
    else if (a == "--table")
      format = kTable;
    else if (a == "--ptp4l-socket") {
      const char* v = value();
      if (!v) return usage();
      cfg.ptp4l_sockets.emplace_back(v);
    } else if (a == "--client-dir") {
      const char* v = value();
      if (!v) return usage();
      cfg.client_dir = v;
    } else if (a == "--max-drift-ppm") {
      const char* v = value();
      if (!v) return usage();
      cfg.max_drift_ppm = std::strtod(v, nullptr);
    } else if (a == "--stale-after-ms" || a == "--timeout-ms" || a == "--domain" || a == "--count" ||
               a == "--interval-ms") {
      const char* v = value();
      if (!v || !parse_long(v, n) || n < 0) return usage();
      if (a == "--stale-after-ms")
        cfg.stale_after = std::chrono::milliseconds(n);
      else if (a == "--timeout-ms")
        cfg.reply_timeout = std::chrono::milliseconds(n);
      else if (a == "--domain")
        cfg.ptp_domain = static_cast<std::uint8_t>(n);
      else if (a == "--count")
        count = n;
      else
        interval_ms = n;
    } else {
      return usage();
    }
  }

  ClockMonitor monitor(cfg);
  for (long i = 0; count == 0 || i < count; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    monitor.poll();
    const ClockSnapshot snap = monitor.snapshot();
    std::string out;
    if (format == kJson)
      out = to_json(snap).dump() + "\n";
    else if (format == kPrometheus)
      append_prometheus(snap, out);
    else
      out = render_table(snap);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  return 0;
}
