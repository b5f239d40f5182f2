// Synthetic two-domain traffic with a known offset θ(t) and known delay distributions, for the
// estimate tests and the report program. Deterministic: a fixed-seed mt19937_64 (its output is
// specified by the standard) and hand-written inverse-CDF sampling, so every platform sees the
// same spans.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "estimate/estimator.hpp"
#include "skewscope/span.hpp"

namespace synth {

using skewscope::DomainId;
using skewscope::Span;

struct Rng {
  std::mt19937_64 g;
  explicit Rng(std::uint64_t seed) : g(seed) {}
  double uniform() { return (static_cast<double>(g() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
};

enum class DelayKind { constant, exponential, pareto };

// One-way true delay: min_ns plus a tail of the given kind (scale_ns is the exponential's mean,
// or the Lomax/Pareto-II scale with shape alpha; alpha 1.5 has infinite variance).
struct Delay {
  DelayKind kind = DelayKind::exponential;
  double min_ns = 20'000;
  double scale_ns = 30'000;
  double alpha = 1.5;
  double sample(Rng& r) const {
    switch (kind) {
      case DelayKind::constant: return min_ns;
      case DelayKind::exponential: return min_ns - scale_ns * std::log(r.uniform());
      case DelayKind::pareto: return min_ns + scale_ns * (std::pow(r.uniform(), -1.0 / alpha) - 1);
    }
    return min_ns;
  }
};

inline const char* kind_name(DelayKind k) {
  return k == DelayKind::constant ? "constant" : k == DelayKind::exponential ? "exponential" : "pareto";
}

// θ(t) = clock_b − clock_a at true time t (seconds). Clock a reads true time.
struct Scenario {
  DomainId a = 1, b = 2;
  Delay ab, ba;
  std::function<double(double)> theta_ns = [](double) { return 0.0; };
  double rate_hz_ab = 200, rate_hz_ba = 200;  // messages per second and direction; 0 = none
  std::uint64_t seed = 42;
};

// All spans with capture time in [t0_s, t1_s), ordered by capture time.
inline std::vector<Span> generate(const Scenario& sc, double t0_s, double t1_s) {
  Rng rng(sc.seed);
  std::vector<Span> out;
  auto direction = [&](bool ab, double rate) {
    if (rate <= 0) return;
    const Delay& delay = ab ? sc.ab : sc.ba;
    for (double t = t0_s + rng.uniform() / rate; t < t1_s; t += (0.5 + rng.uniform()) / rate) {
      const double d = delay.sample(rng);
      const double tr = t + d * 1e-9;
      Span s;
      s.src = ab ? sc.a : sc.b;
      s.dst = ab ? sc.b : sc.a;
      // Sender stamps in its own clock at send time, receiver in its own at receive time.
      s.send_ns = std::llround(t * 1e9 + (ab ? 0.0 : sc.theta_ns(t)));
      s.recv_ns = std::llround(tr * 1e9 + (ab ? sc.theta_ns(tr) : 0.0));
      s.capture_ns = std::llround(tr * 1e9);
      if (tr < t1_s) out.push_back(s);
    }
  };
  direction(true, sc.rate_hz_ab);
  direction(false, sc.rate_hz_ba);
  std::stable_sort(out.begin(), out.end(), [](const Span& x, const Span& y) { return x.capture_ns < y.capture_ns; });
  return out;
}

// Feeds spans and ticks once per tick_s of capture time; calls on_tick(now_ns) after each tick.
inline void drive(skewscope::estimate::Estimator& est, const std::vector<Span>& spans, double t0_s, double t1_s,
                  double tick_s, const std::function<void(std::int64_t)>& on_tick) {
  std::size_t i = 0;
  for (double t = t0_s + tick_s; t <= t1_s + 1e-9; t += tick_s) {
    const auto now = std::llround(t * 1e9);
    while (i < spans.size() && spans[i].capture_ns <= now) est.observe(spans[i++]);
    est.tick(now);
    on_tick(now);
  }
}

}  // namespace synth
