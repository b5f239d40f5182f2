// The pairing/health core alone, fed with synthetic ABI halves: halves per second on one core
// (Google Benchmark runs single-threaded here, so items_per_second is per core), and bytes of
// heap per pending half.
//
//   BM_AgentCore/...      AgentCore::ingest (decode, domain, clock, correlate, health, estimate)
//                         plus tick() every 100 ms of simulated time, as the agent's capture thread
//   BM_Correlator/...     Correlator::add alone (+ expire every 100 ms of simulated time)
//   BM_ReplayOnly         the copy into a batch vector that both include (the ring-buffer read)
//   BM_PendingMemory/...  heap per pending half: N halves that never pair, one iteration
//
// Arguments: flows, reads per message (1: same size as the write, 2: split 60+40), simulated
// message rate in thousands per second (it sets how many receives wait out their reorder
// allowance, hence the tables' sizes).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdio>
#include <memory>

#include "capture/half_decode.hpp"
#include "core/agent_core.hpp"
#include "correlate/correlator.hpp"
#include "synthetic_traffic.hpp"

using namespace skewscope;
using namespace skewscope::bench;

namespace {

constexpr std::size_t kBatch = 256;  // records per ingest, about what one ring-buffer poll gives
constexpr std::int64_t kTickNs = 100'000'000;

TrafficShape shape_from(const benchmark::State& state) {
  TrafficShape s;
  s.flows = static_cast<int>(state.range(0));
  if (state.range(1) == 2) s.read_bytes = {60, 40};
  s.message_gap_ns = 1'000'000 / state.range(2);  // range(2) in k msg/s
  return s;
}

AgentCore make_core(std::size_t max_pending = CorrelatorLimits{}.max_pending) {
  DomainRegistry domains("host", true);
  domains.add_netns("a", kSenderNetns);
  domains.add_netns("b", kReceiverNetns);
  AgentCoreConfig config;
  config.limits.max_pending = max_pending;
  return AgentCore(std::move(domains), config);
}

// Halves of the first round (every flow writes once, then reads it), plus one batch: past them,
// every flow's first send has met its receive.
std::size_t first_round_halves(const TrafficShape& shape) {
  return static_cast<std::size_t>(shape.flows) * (1 + shape.read_bytes.size()) + kBatch;
}

// pair_ratio: pairs over the sends that could have paired (those still waiting at the end,
// the last round's, are left out).
void report_pairing(benchmark::State& state, const CorrelatorCounters& c, std::size_t pending_sends,
                    std::size_t pending_recvs) {
  const double settled = static_cast<double>(c.sends) - static_cast<double>(pending_sends);
  state.counters["pair_ratio"] = settled > 0 ? static_cast<double>(c.pairs) / settled : 0;
  state.counters["dropped_table_full"] = static_cast<double>(c.dropped_table_full);
  state.counters["pending_end"] = static_cast<double>(pending_sends + pending_recvs);
}

void BM_AgentCore(benchmark::State& state) {
  const Epoch epoch = make_epoch(shape_from(state));
  auto core = std::make_unique<AgentCore>(make_core());
  Replayer replay(epoch, kBatch);
  std::vector<skewscope_half_event> batch;
  batch.reserve(kBatch);
  std::int64_t last_tick = 0;
  std::size_t ingested = 0;
  auto step = [&] {
    const std::int64_t now = replay.next(batch);
    if (now - last_tick >= kTickNs) {
      core->tick(now);
      last_tick = now;
    }
    core->ingest(batch);
    ingested += batch.size();
  };
  for (auto _ : state) {
    step();
    benchmark::DoNotOptimize(core->last_spans().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
  // pair_ratio needs sends that settled: a short run (--benchmark_min_time=0.01, tables still cold)
  // can stop before the first round's reads of 16384 flows. Finish one round after the timed
  // loop, untimed, so that the ratio always judges every flow's first message.
  while (ingested < first_round_halves(shape_from(state))) step();
  AgentReport r = core->report(last_tick, SourceCounters{});
  report_pairing(state, r.correlator, r.pending_sends, r.pending_recvs);
}

void BM_Correlator(benchmark::State& state) {
  const Epoch epoch = make_epoch(shape_from(state));
  std::vector<Half> halves;
  for (const auto& e : epoch.records) {
    Half h = *decode_half(e).value;
    h.domain = e.kind == SKEWSCOPE_HALF_SEND ? 1 : 2;
    h.domain_ns = h.capture_ns;
    halves.push_back(h);
  }
  Correlator correlator;
  std::vector<Span> spans;
  std::size_t pos = 0;
  std::int64_t round = 0, last_tick = 0;
  std::size_t added = 0;
  auto step = [&] {
    spans.clear();
    std::int64_t now = 0;
    for (std::size_t i = 0; i < kBatch; ++i) {
      if (pos == halves.size()) {
        pos = 0;
        ++round;
      }
      Half h = halves[pos++];
      h.capture_ns += round * epoch.duration_ns;
      h.domain_ns = h.capture_ns;
      h.seq += static_cast<std::uint32_t>(round) * epoch.bytes_per_flow;
      now = h.capture_ns;
      correlator.add(h, spans);
    }
    added += kBatch;
    if (now - last_tick >= kTickNs) {
      correlator.expire(now);
      last_tick = now;
    }
  };
  for (auto _ : state) {
    step();
    benchmark::DoNotOptimize(spans.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
  while (added < first_round_halves(shape_from(state))) step();  // as in BM_AgentCore: untimed, for pair_ratio
  report_pairing(state, correlator.counters(), correlator.pending_sends(), correlator.pending_recvs());
}

void BM_ReplayOnly(benchmark::State& state) {
  const Epoch epoch = make_epoch(TrafficShape{});
  Replayer replay(epoch, kBatch);
  std::vector<skewscope_half_event> batch;
  batch.reserve(kBatch);
  for (auto _ : state) {
    benchmark::DoNotOptimize(replay.next(batch));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
}

std::size_t heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // arena bytes in use + mmap'd blocks (large hash bucket arrays)
}

// N halves that never pair, through the whole AgentCore. Kind: 0 sends on `flows` flows,
// 1 receives on `flows` flows (kept for the reorder allowance).
void BM_PendingMemory(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int flows = static_cast<int>(state.range(1));
  const bool sends = state.range(2) == 0;
  std::vector<skewscope_half_event> records;
  records.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto f = static_cast<int>(i % static_cast<std::size_t>(flows));
    auto seq = static_cast<std::uint32_t>(1000 + 100 * (i / static_cast<std::size_t>(flows)));
    auto e = flow_half(sends, static_cast<std::uint16_t>(10000 + f % 50000), seq, 100,
                       1'000'000'000 + static_cast<std::int64_t>(i));
    // Beyond 50 000 client ports, the next server port: 100 000 flows are 100 000 distinct keys.
    (sends ? e.remote_port : e.local_port) = static_cast<std::uint16_t>(5000 + f / 50000);
    records.push_back(e);
  }
  std::vector<skewscope_half_event> batch;
  batch.reserve(kBatch);
  double bytes_per_half = 0;
  std::size_t pending = 0;
  for (auto _ : state) {
    auto core = std::make_unique<AgentCore>(make_core(n + 1));
    const std::size_t before = heap_in_use();
    for (std::size_t i = 0; i < n; i += kBatch) {
      batch.assign(records.begin() + static_cast<long>(i),
                   records.begin() + static_cast<long>(std::min(n, i + kBatch)));
      core->ingest(batch);
    }
    batch.clear();
    batch.shrink_to_fit();
    batch.reserve(kBatch);
    const std::size_t after = heap_in_use();
    AgentReport r = core->report(1'000'000'000, SourceCounters{});
    pending = r.pending_sends + r.pending_recvs;
    bytes_per_half = static_cast<double>(after - before) / static_cast<double>(pending);
  }
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["bytes_per_pending_half"] = bytes_per_half;
}

// flows, reads per message, k msg/s simulated
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"flows", "reads", "kmsg_s"});
  for (int flows : {1, 64, 1024, 16384}) b->Args({flows, 1, 100});
  b->Args({64, 2, 100});
  // Above max_pending / recv_max_age (262144 / 1 s): receives waiting out their reorder
  // allowance fill the pending table.
  b->Args({64, 1, 400});
  b->Args({64, 1, 1000});  // 1 M msg/s: receives must leave the table once paired
}

}  // namespace

BENCHMARK(BM_AgentCore)->Apply(shapes);
BENCHMARK(BM_Correlator)->Apply(shapes);
BENCHMARK(BM_ReplayOnly);
BENCHMARK(BM_PendingMemory)
    ->ArgNames({"n", "flows", "recv"})
    ->Args({100'000, 1, 0})
    ->Args({100'000, 1024, 0})
    ->Args({100'000, 50'000, 0})   // ports 10000..59999: one send per flow, flow state included
    ->Args({100'000, 100'000, 0})  // 100 000 concurrent flows, one send waiting on each
    ->Args({100'000, 1, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
