// http_hostile: slow, idle, trickling and flooding clients against the agent's HTTP endpoint, on
// loopback only, while /metrics latency is measured from 127.0.0.1 and the agent's RSS sampled.
//
//   http_hostile --target 127.0.0.1:PORT --pid PID            all checks, then a summary; exit 1 if
//                                                             a requirement fails, 2 on setup error
//   http_hostile --target ... --hold-seconds S                only hold the slow clients for S s
//                                                             (prints "holding N slow clients")
//
// The slow clients come from 127.0.1.1..127.0.1.K (bound before connect) so that per-address
// limits do not simply refuse them: this is the many-clients case. Everything is bounded: client
// counts, bytes sent and every phase's duration; the tool stops by itself.
//
// This file is the driver: flags, the order of the phases, the requirements and the report. The
// loopback plumbing is http_hostile_net, the slow clients http_hostile_slow_clients, and the
// measurements and one-shot attacks http_hostile_probes.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http_hostile_net.hpp"
#include "http_hostile_probes.hpp"
#include "http_hostile_slow_clients.hpp"

using http_hostile::Clock;
using http_hostile::closed_at_once;
using http_hostile::FloodResult;
using http_hostile::get_request;
using http_hostile::header_flood;
using http_hostile::ipv4;
using http_hostile::Latency;
using http_hostile::measure_metrics;
using http_hostile::Reply;
using http_hostile::request;
using http_hostile::rss_mb;
using http_hostile::since;
using http_hostile::SlowClients;

int main(int argc, char** argv) {
  CLI::App app{"hostile and slow HTTP clients against the skewscope agent (loopback only)"};
  std::string target_text;
  int pid = 0, slow = 200, sources = 50, floods = 4, range_parts = 2701, per_address_probe = 64;
  double load_seconds = 8, hold_seconds = 0, max_rss_growth_mb = 32;
  app.add_option("--target", target_text, "the agent's ADDR:PORT, on 127.0.0.0/8")->required();
  app.add_option("--pid", pid, "the agent's pid, for its RSS");
  app.add_option("--slow", slow, "slow clients held during the load phase")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--sources", sources, "source addresses 127.0.1.1..N for them")
      ->capture_default_str()
      ->check(CLI::Range(1, 250));
  app.add_option("--floods", floods, "concurrent header floods")->capture_default_str()->check(CLI::Range(0, 16));
  app.add_option("--range-parts", range_parts, "parts in the Range request")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--load-seconds", load_seconds, "how long /metrics is measured under the slow clients")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 120.0));
  app.add_option("--max-rss-growth-mb", max_rss_growth_mb,
                 "allowed RSS growth: the agent's limits allow 512 connections x 32 KiB request buffers "
                 "= 16 MiB, plus replies in flight and allocator slack; the old server took 130 MB per flood")
      ->capture_default_str();
  app.add_option("--per-address-probe", per_address_probe, "connections opened from one address (0: skip)")
      ->capture_default_str()
      ->check(CLI::Range(0, 500));
  app.add_option("--hold-seconds", hold_seconds, "only hold the slow clients this long, then exit")
      ->check(CLI::Range(0.0, 300.0));
  CLI11_PARSE(app, argc, argv);

  sockaddr_in target{};
  try {
    auto colon = target_text.rfind(':');
    if (colon == std::string::npos) throw std::runtime_error("--target must be ADDR:PORT");
    target = ipv4(target_text.substr(0, colon), std::stoi(target_text.substr(colon + 1)));
  } catch (const std::exception& e) {
    std::cerr << "http_hostile: " << e.what() << "\n";
    return 2;
  }
  if ((ntohl(target.sin_addr.s_addr) >> 24) != 127) {
    std::cerr << "http_hostile: --target must be on loopback (127.0.0.0/8)\n";
    return 2;
  }

  if (hold_seconds > 0) {
    SlowClients clients(target, slow, sources);
    std::atomic<bool> stop{false};
    std::thread loop([&] { clients.run(stop); });
    const auto start = Clock::now();
    bool announced = false;
    while (since(start) < hold_seconds) {
      if (!announced && clients.connected >= slow) {
        std::cout << "holding " << clients.connected << " slow clients" << std::endl;
        announced = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    stop = true;
    loop.join();
    std::cout << "released; cut by server " << clients.cut_by_server << ", failed connects " << clients.connect_failures
              << std::endl;
    return announced ? 0 : 2;
  }

  std::vector<std::string> failures;
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) failures.push_back(what);
    return ok;
  };
  std::atomic<bool> sampling{true};
  double rss_peak = 0;
  std::thread rss_sampler([&] {
    while (sampling && pid > 0) {
      rss_peak = std::max(rss_peak, rss_mb(pid));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const double rss_start = pid > 0 ? rss_mb(pid) : -1;
  if (pid > 0 && rss_start < 0) {
    std::cerr << "http_hostile: no process " << pid << "\n";
    sampling = false;
    rss_sampler.join();
    return 2;
  }

  // 1. Baseline: /metrics with nobody else connected.
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    stop = true;
  });
  Latency baseline = measure_metrics(target, stop, nullptr, nullptr);
  stopper.join();
  std::printf("baseline   /metrics %s\n", baseline.summary().c_str());
  if (!require(baseline.failed == 0 && !baseline.seconds.empty(), "baseline /metrics not answered")) {
    std::fprintf(stderr, "http_hostile: the agent does not answer /metrics; nothing else measured\n");
    sampling = false;
    rss_sampler.join();
    return 2;
  }

  // 2. Multi-part Range on the landing page (a fixed body): the reply must not be larger.
  Reply plain = request(target, "127.0.0.1", get_request("/"), 5);
  // Every part the whole body: the most a server that honours multi-part ranges can be made to send.
  std::string ranges = "Range: bytes=0-";
  for (int i = 1; i < range_parts; ++i) ranges += ",0-";
  Reply ranged = request(target, "127.0.0.1", get_request("/", ranges + "\r\n"), 5);
  std::printf("range      plain body %zu B; %d-part Range request of %zu B: status %d, body %zu B\n", plain.body_size(),
              range_parts, ranges.size(), ranged.status(), ranged.body_size());
  require(plain.ok && plain.body_size() > 0, "landing page not served");
  require(ranged.body_size() <= plain.body_size(), "Range reply larger than the plain body");

  // 3. Header floods, concurrent: half 64k lines of 1 KB, half 64k tiny lines (count, not size).
  std::vector<FloodResult> flood_results(static_cast<std::size_t>(floods));
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < floods; ++i)
      threads.emplace_back([&, i] {
        flood_results[static_cast<std::size_t>(i)] =
            header_flood(target, "127.0.3." + std::to_string(1 + i), 65536, i % 2 == 0 ? 1024 : 1);
      });
    for (auto& t : threads) t.join();
  }
  for (int i = 0; i < floods; ++i) {
    const auto& f = flood_results[static_cast<std::size_t>(i)];
    std::printf("flood      %s lines: %zu B sent before the server stopped reading, reply status %d\n",
                i % 2 == 0 ? "64k x 1 KB" : "64k tiny", f.bytes_sent, f.status);
    require(f.status == 0 || f.status >= 400, "header flood " + std::to_string(i) + " not rejected");
    require(f.bytes_sent < 65536ull * 1024, "header flood " + std::to_string(i) + " read to the end");
  }

  // 4. Slow clients from many addresses; /metrics measured from 127.0.0.1 meanwhile.
  SlowClients clients(target, slow, sources);
  stop = false;
  std::thread loop([&] { clients.run(stop); });
  const auto ramp = Clock::now();
  while (clients.connected < slow && since(ramp) < 10) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double ramp_seconds = since(ramp);
  std::atomic<bool> stop_measure{false};
  std::vector<int> connected_samples;
  std::thread measurer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(load_seconds));
    stop_measure = true;
  });
  Latency loaded = measure_metrics(target, stop_measure, &clients.connected, &connected_samples);
  measurer.join();
  stop = true;
  loop.join();
  std::sort(connected_samples.begin(), connected_samples.end());
  const int connected_min = connected_samples.empty() ? 0 : connected_samples.front();
  const int connected_median = connected_samples.empty() ? 0 : connected_samples[connected_samples.size() / 2];
  std::printf(
      "slow       %d clients from %d addresses (idle, partial, trickle, slow-reader), all connected after %.1f s; "
      "connected during the measurement: min %d, median %d; cut by the server %llu, failed connects %llu\n",
      slow, sources, ramp_seconds, connected_min, connected_median,
      static_cast<unsigned long long>(clients.cut_by_server),
      static_cast<unsigned long long>(clients.connect_failures));
  std::printf("loaded     /metrics %s\n", loaded.summary().c_str());
  // The load must have been there, or the latency says nothing.
  if (connected_median < slow * 95 / 100) {
    std::fprintf(stderr, "http_hostile: could not hold %d slow clients (median %d): no verdict on latency\n", slow,
                 connected_median);
    failures.push_back("slow clients not held");
  }
  require(loaded.failed == 0 && !loaded.seconds.empty() && loaded.max() < 1.0,
          "/metrics not answered within 1 s with slow clients connected");
  if (load_seconds >= 7) require(clients.cut_by_server > 0, "no slow client ever cut by the server");

  // 5. Per-address limit: more connections from one address than a scraper needs.
  if (per_address_probe > 0) {
    int closed = closed_at_once(target, "127.0.2.1", per_address_probe);
    std::printf("per-addr   %d idle connections from 127.0.2.1: %d closed by the server within 1 s\n",
                per_address_probe, closed);
    require(closed > 0, "no per-address connection limit");
  }

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  sampling = false;
  rss_sampler.join();
  if (pid > 0) {
    const double rss_end = rss_mb(pid);
    std::printf("rss        start %.1f MB, peak %.1f MB (growth %.1f MB, bound %.0f MB), end %.1f MB\n", rss_start,
                rss_peak, rss_peak - rss_start, max_rss_growth_mb, rss_end);
    require(rss_peak - rss_start <= max_rss_growth_mb, "agent RSS grew beyond the bound");
  }
  for (const auto& f : failures) std::printf("FAIL       %s\n", f.c_str());
  std::printf("result     %s\n", failures.empty() ? "PASS" : "FAIL");
  return failures.empty() ? 0 : 1;
}
