// Measured figures for the offset estimator, from synthetic traffic with a known offset (see synth.hpp):
// estimation error and half-width versus offset, warm-up, drift, convergence after a step, and a
// what-if table. Deterministic; run: build-dir/tests/unit/estimate/estimate_report
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "estimate/whatif.hpp"
#include "synth.hpp"

using namespace skewscope::estimate;
using synth::Delay;
using synth::DelayKind;
using synth::Scenario;

namespace {

// Lab-like one-way delays: 20 µs floor (Δt_min 20 µs) plus a 30 µs tail, 200 messages/s each way.
Scenario lab(DelayKind kind, std::function<double(double)> theta) {
  Scenario sc;
  sc.ab = sc.ba = Delay{kind, 20'000, 30'000};
  sc.theta_ns = std::move(theta);
  return sc;
}

void offsets() {
  std::printf("## Error and half-width versus offset (90 s, tick 1 s, window 30 s, steady state = t >= 30 s)\n\n");
  std::printf(
      "| delays | offset (us) | ticks | misses | mean |error| (us) | mean half-width (us) | max half-width (us) | "
      "half-width / dt_min |\n|---|---|---|---|---|---|---|---|\n");
  for (DelayKind kind : {DelayKind::constant, DelayKind::exponential, DelayKind::pareto})
    for (double theta : {0.0, 50e3, -50e3, 300e3, -300e3, 2e6, -2e6}) {
      Scenario sc = lab(kind, [theta](double) { return theta; });
      sc.seed = 1000 + static_cast<std::uint64_t>(std::fabs(theta)) + (theta < 0);
      Estimator est;
      int ticks = 0, misses = 0, n = 0;
      double err = 0, hw = 0, hw_max = 0;
      synth::drive(est, synth::generate(sc, 0, 90), 0, 90, 1, [&](std::int64_t now) {
        auto e = est.estimate(1, 2);
        ++ticks;
        if (!e || !e->offset_ns) return void(++misses);
        misses += theta < *e->lower_ns || theta > *e->upper_ns;
        if (now < 30'000'000'000) return;
        ++n;
        err += std::fabs(*e->offset_ns - theta);
        hw += *e->bound_ns;
        hw_max = std::max(hw_max, *e->bound_ns);
      });
      std::printf("| %s | %+.0f | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", synth::kind_name(kind), theta / 1e3, ticks,
                  misses, err / n / 1e3, hw / n / 1e3, hw_max / 1e3, hw / n / 20'000);
    }
  std::printf("\n");
}

void warmup() {
  std::printf("## Warm-up: half-width after the first traffic (exponential delays, offset 300 us)\n\n");
  std::printf("| t (s) | half-width (us), max drift 200 ppm | half-width (us), drift model off |\n|---|---|---|\n");
  const Scenario sc = lab(DelayKind::exponential, [](double) { return 300e3; });
  const auto spans = synth::generate(sc, 0, 40);
  Config off;
  off.max_drift_ppm = 0;
  Estimator a, b(off);
  std::vector<double> ha, hb;
  synth::drive(a, spans, 0, 40, 1, [&](std::int64_t) { ha.push_back(*a.estimate(1, 2)->bound_ns); });
  synth::drive(b, spans, 0, 40, 1, [&](std::int64_t) { hb.push_back(*b.estimate(1, 2)->bound_ns); });
  for (int t : {1, 2, 3, 5, 10, 20, 30, 40}) std::printf("| %d | %.1f | %.1f |\n", t, ha[t - 1] / 1e3, hb[t - 1] / 1e3);
  std::printf("\n");
}

void drift() {
  std::printf("## Drifting offset (120 s; theta = 100 us + rate x t)\n\n");
  std::printf(
      "| drift (ppm) | misses | drift estimate at 60 s (ppm) | at 120 s (ppm) | mean half-width t>=30 s (us) "
      "|\n|---|---|---|---|---|\n");
  for (double ppm : {20.0, -50.0, 150.0}) {
    const Scenario sc = lab(DelayKind::exponential, [ppm](double t) { return 100e3 + ppm * 1e3 * t; });
    Estimator est;
    int misses = 0, n = 0;
    double hw = 0;
    std::string d60 = "null", d120 = "null";
    synth::drive(est, synth::generate(sc, 0, 120), 0, 120, 1, [&](std::int64_t now) {
      auto e = *est.estimate(1, 2);
      const double theta = sc.theta_ns(now * 1e-9);
      misses += !e.offset_ns || theta < *e.lower_ns || theta > *e.upper_ns;
      auto fmt = [&] {
        return e.drift_ppm
                   ? std::to_string(*e.drift_ppm).substr(0, 6) + " ± " + std::to_string(*e.drift_bound_ppm).substr(0, 4)
                   : std::string("null");
      };
      if (now == 60'000'000'000) d60 = fmt();
      if (now == 120'000'000'000) d120 = fmt();
      if (now >= 30'000'000'000 && e.bound_ns) {
        ++n;
        hw += *e.bound_ns;
      }
    });
    std::printf("| %+.0f | %d | %s | %s | %.2f |\n", ppm, misses, d60.c_str(), d120.c_str(), hw / n / 1e3);
  }
  std::printf("\n");

  std::printf("## Frequency step: theta = 0 until 40.3 s, then drifting (100 s)\n\n");
  std::printf(
      "| drift after (ppm) | ticks with a miss | of which not flagged empty | largest miss (us) | empty-interval ticks "
      "| mean half-width (us) |\n|---|---|---|---|---|---|\n");
  for (double ppm : {20.0, -60.0, 150.0}) {
    const Scenario sc =
        lab(DelayKind::exponential, [ppm](double t) { return t < 40.3 ? 0.0 : ppm * 1e3 * (t - 40.3); });
    Estimator est;
    int missed = 0, silent = 0, empty = 0, n = 0;
    double hw = 0, worst = 0;
    synth::drive(est, synth::generate(sc, 0, 100), 0, 100, 1, [&](std::int64_t now) {
      auto e = *est.estimate(1, 2);
      const double theta = sc.theta_ns(now * 1e-9);
      const bool miss = !e.offset_ns || theta < *e.lower_ns || theta > *e.upper_ns;
      if (miss && e.offset_ns) worst = std::max(worst, std::max(*e.lower_ns - theta, theta - *e.upper_ns));
      missed += miss;
      silent += miss && !e.empty_interval;
      empty += e.empty_interval;
      if (e.bound_ns) {
        ++n;
        hw += *e.bound_ns;
      }
    });
    std::printf("| %+.0f | %d | %d | %.2f | %d | %.2f |\n", ppm, missed, silent, worst / 1e3, empty, hw / n / 1e3);
  }
  std::printf("\n");
}

void convergence() {
  std::printf("## Convergence after a step in the offset at t = 40.3 s (100 s run, tick 1 s, bucket 1 s)\n\n");
  std::printf(
      "Holds again = from then on every tick's interval holds the new offset. Narrow again = from then on the\n"
      "half-width is also below 3 x dt_min (60 us). Misses count ticks whose interval excludes the offset.\n\n");
  std::printf(
      "| step (us) | max drift (ppm) | holds again after (s) | narrow again after (s) | misses | of which not flagged "
      "empty | empty-interval ticks | max half-width while empty (us) |\n|---|---|---|---|---|---|---|---|\n");
  for (double max_ppm : {200.0, 0.0})
    for (double step : {50e3, -50e3, 300e3, -300e3, 2e6, -2e6}) {
      const Scenario sc = lab(DelayKind::exponential, [step](double t) { return t < 40.3 ? 0.0 : step; });
      Config cfg;
      cfg.max_drift_ppm = max_ppm;
      Estimator est(cfg);
      double last_out = 0, last_wide = 0, widest = 0;
      int missed = 0, silent = 0, empty = 0;
      synth::drive(est, synth::generate(sc, 0, 100), 0, 100, 1, [&](std::int64_t now) {
        const double t = now * 1e-9, theta = sc.theta_ns(t);
        auto e = est.estimate(1, 2);
        const bool has = e && e->offset_ns;
        const bool inside = has && theta >= *e->lower_ns && theta <= *e->upper_ns;
        if (has && !inside) ++missed;
        if (has && !inside && !e->empty_interval) ++silent;
        if (!inside) last_out = t;
        if (!inside || *e->bound_ns >= 3 * 20'000) last_wide = t;
        if (e && e->empty_interval) {
          ++empty;
          if (has) widest = std::max(widest, *e->bound_ns);
        }
      });
      auto after = [](double t) { return t < 40.3 ? 0.0 : std::ceil(t - 40.3); };
      std::printf("| %+.0f | %.0f | %.0f | %.0f | %d | %d | %d | %.1f |\n", step / 1e3, max_ppm, after(last_out),
                  after(last_wide), missed, silent, empty, widest / 1e3);
    }
  std::printf("\n");
}

void whatif_table() {
  std::printf("## What-if: lab-like pipeline pre -> infer -> post (30 s of traffic, clocks in sync)\n\n```\n");
  Estimator est;
  std::vector<skewscope::Span> spans;
  const char* names[] = {"?", "pre", "infer", "post"};
  struct Link {
    skewscope::DomainId a, b;
    double floor_ns, tail_ns;
  };
  for (const Link& l : {Link{1, 2, 20e3, 30e3}, Link{2, 3, 40e3, 2e6}}) {  // a fast hop and a Kafka-like 2 ms hop
    Scenario sc;
    sc.a = l.a;
    sc.b = l.b;
    sc.seed = l.a * 7 + l.b;
    sc.ab = sc.ba = Delay{DelayKind::exponential, l.floor_ns, l.tail_ns};
    auto s = synth::generate(sc, 0, 30);
    spans.insert(spans.end(), s.begin(), s.end());
  }
  std::stable_sort(spans.begin(), spans.end(), [](auto& x, auto& y) { return x.capture_ns < y.capture_ns; });
  synth::drive(est, spans, 0, 30, 1, [](std::int64_t) {});
  auto models = *parse_error_models("gaussian:50us|gaussian:1ms|laplace:250us|laplace:1ms|gaussian:5ms");
  std::printf("%s```\n", render_what_if(what_if(est, models, 30'000'000'000), [&](skewscope::DomainId d) {
                           return std::string(names[d]);
                         }).c_str());
}

}  // namespace

int main() {
  offsets();
  warmup();
  drift();
  convergence();
  whatif_table();
}
