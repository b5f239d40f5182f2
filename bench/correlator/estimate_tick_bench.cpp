// What an estimator tick and a pair's diagnosis history cost, per pair: the price of the agent's
// --estimate-interval (docs/diagnosis.md: the tick is the floor under a verdict's time).
//
//   BM_EstimatorTick/pairs:N    Estimator::tick over N pairs whose windows (30 s, 30 buckets) are full
//                               of request/response spans both ways; time per tick, and per pair
//   BM_HistoryShift/interval_ms PairHistory::shift over two minutes of a still pair's estimates at
//                               that interval (the history's quadratic parts at their largest):
//                               the diagnosis's cost per pair per status request
#include <benchmark/benchmark.h>

#include <cstdint>

#include "diagnose/pair_history.hpp"
#include "estimate/estimator.hpp"

using namespace skewscope;

namespace {

constexpr std::int64_t kSecondNs = 1'000'000'000;

// 100 spans a second each way per pair for the whole window, offset 0, delays 20-40 µs.
void fill(estimate::Estimator& est, int pairs, std::int64_t from_ns, std::int64_t to_ns) {
  constexpr std::int64_t kGapNs = 10'000'000;
  for (std::int64_t t = from_ns; t < to_ns; t += kGapNs)
    for (int p = 0; p < pairs; ++p) {
      const auto a = static_cast<DomainId>(2 * p), b = static_cast<DomainId>(2 * p + 1);
      const std::int64_t delay = 20'000 + (t / kGapNs % 7) * 3'000;
      est.observe(Span{a, b, Transport::tcp, t, t + delay, t + delay, 64, TimestampSource::syscall});
      est.observe(
          Span{b, a, Transport::tcp, t + 50'000, t + 50'000 + delay, t + 50'000 + delay, 64, TimestampSource::syscall});
    }
}

void BM_EstimatorTick(benchmark::State& state) {
  const int pairs = static_cast<int>(state.range(0));
  estimate::Config config;
  config.max_pairs = static_cast<std::size_t>(pairs) + 1;
  estimate::Estimator est(config);
  std::int64_t now = 30 * kSecondNs;
  fill(est, pairs, 0, now);
  est.tick(now);
  for (auto _ : state) {
    // The next 250 ms of spans, outside the timing: only the tick is measured.
    state.PauseTiming();
    fill(est, pairs, now, now + 250'000'000);
    now += 250'000'000;
    state.ResumeTiming();
    est.tick(now);
  }
  // items: pairs estimated, so items_per_second reads as pairs per second of CPU.
  state.SetItemsProcessed(state.iterations() * pairs);
  state.counters["ns_per_pair"] = benchmark::Counter(
      static_cast<double>(pairs), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_HistoryShift(benchmark::State& state) {
  const std::int64_t interval_ns = state.range(0) * 1'000'000;
  diagnose::Config config;
  config.estimate_interval_ns = interval_ns;
  diagnose::PairHistory history(config.history_samples());
  for (std::int64_t t = 0; t <= config.history_ns; t += interval_ns) {
    diagnose::OffsetSample s;
    s.t_ns = t;
    s.offset_ns = static_cast<double>(t / interval_ns % 5) * 1'000;  // wanders within its bounds
    s.bound_ns = 15'000;
    s.settled = true;
    s.drift_ppm = 0;
    s.drift_bound_ppm = 8;
    history.add(s);
  }
  for (auto _ : state) benchmark::DoNotOptimize(history.shift(config));
  state.SetItemsProcessed(state.iterations());  // one pair's history read per iteration
}

}  // namespace

BENCHMARK(BM_EstimatorTick)->ArgName("pairs")->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HistoryShift)->ArgName("interval_ms")->Arg(1000)->Arg(250)->Arg(100)->Unit(benchmark::kMicrosecond);
