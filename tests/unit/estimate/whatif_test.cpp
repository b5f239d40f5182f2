#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "estimate/whatif.hpp"
#include "synth.hpp"

using namespace skewscope::estimate;

namespace {

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Independent check of the Laplace closed form: P(s + e_dst − e_src < 0) by integrating the
// product of the two Laplace densities numerically (composite Simpson over e_src).
double laplace_numeric(double s, double b) {
  auto pdf = [b](double x) { return std::exp(-std::fabs(x) / b) / (2 * b); };
  auto cdf = [b](double x) { return x < 0 ? 0.5 * std::exp(x / b) : 1 - 0.5 * std::exp(-x / b); };
  // P(e_dst < e_src − s) = ∫ pdf(e) cdf(e − s) de
  const double lo = -40 * b, hi = 40 * b;
  const int n = 200000;
  const double h = (hi - lo) / n;
  double sum = 0;
  for (int i = 0; i <= n; ++i) {
    const double x = lo + i * h;
    const double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    sum += w * pdf(x) * cdf(x - s);
  }
  return sum * h / 3;
}

skewscope::Span span(skewscope::DomainId src, skewscope::DomainId dst, std::int64_t s, std::int64_t at) {
  return {src, dst, skewscope::Transport::tcp, 0, s, at, 0};
}

}  // namespace

TEST_CASE("error specs parse, and bad ones say why") {
  auto g = parse_error_model("gaussian:1ms");
  REQUIRE(g);
  CHECK(g->kind == ErrorKind::gaussian);
  CHECK(g->scale_ns == 1e6);
  auto l = parse_error_model("laplace:250us");
  REQUIRE(l);
  CHECK(l->kind == ErrorKind::laplace);
  CHECK(l->scale_ns == 250e3);
  auto both = parse_error_models("gaussian:1ms|laplace:250us");
  REQUIRE(both);
  CHECK(both->size() == 2);
  CHECK((*both)[1].spec == "laplace:250us");
  CHECK(parse_error_models("normal:5ms, laplace:30s")->size() == 2);

  auto neg = parse_error_model("gaussian:-2ms");
  CHECK_FALSE(neg);
  CHECK(neg.error.find("negative") != std::string::npos);
  auto kind = parse_error_model("uniform:1ms");
  CHECK_FALSE(kind);
  CHECK(kind.error.find("uniform") != std::string::npos);
  CHECK_FALSE(parse_error_model("gaussian"));
  CHECK_FALSE(parse_error_model("gaussian:"));
  CHECK_FALSE(parse_error_model("gaussian:5"));  // a unit is required
  CHECK_FALSE(parse_error_model("gaussian:5parsecs"));
  CHECK_FALSE(parse_error_models("gaussian:1ms|"));  // empty second spec
  CHECK_FALSE(parse_error_models(""));
  CHECK(parse_error_model("gaussian:0ns")->scale_ns == 0);
}

TEST_CASE("per-message probability matches the closed forms") {
  const ErrorModel g{ErrorKind::gaussian, 1e6, "gaussian:1ms"};
  for (double s : {0.0, 100e3, 1e6, 1.414e6, 3e6, -500e3})
    CHECK(inversion_probability(g, s) == doctest::Approx(phi(-s / (1e6 * std::sqrt(2.0)))).epsilon(1e-12));
  CHECK(inversion_probability(g, 0) == doctest::Approx(0.5));
  const ErrorModel l{ErrorKind::laplace, 250e3, "laplace:250us"};
  for (double s : {0.0, 50e3, 250e3, 1e6, -300e3})
    CHECK(inversion_probability(l, s) == doctest::Approx(laplace_numeric(s, 250e3)).epsilon(1e-6));
  const ErrorModel perfect{ErrorKind::gaussian, 0, "gaussian:0ns"};
  CHECK(inversion_probability(perfect, -1) == 1);
  CHECK(inversion_probability(perfect, 0) == 0);
}

TEST_CASE("what-if table from windowed spans: constant span s gives Φ(−s/(σ√2))") {
  Estimator est;
  // 1 → 2 always 100 µs, 2 → 1 always 1 ms; 5000 messages each so the reservoir is sampled.
  for (std::int64_t i = 0; i < 5000; ++i) {
    const std::int64_t at = 1'000'000'000 + i * 2'000'000;
    est.observe(span(1, 2, 100'000, at));
    est.observe(span(2, 1, 1'000'000, at + 1'000'000));
  }
  const std::int64_t now = 11'000'000'000;
  auto models = *parse_error_models("gaussian:1ms|laplace:250us|gaussian:0ns");
  const auto t = what_if(est, models, now);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].src == 1);
  CHECK(t.rows[0].window_spans == 5000);
  CHECK(t.rows[0].samples <= 30 * 32);
  const double p12 = phi(-100e3 / (1e6 * std::sqrt(2.0))), p21 = phi(-1e6 / (1e6 * std::sqrt(2.0)));
  CHECK(t.rows[0].rate[0] == doctest::Approx(p12).epsilon(1e-9));
  CHECK(t.rows[1].rate[0] == doctest::Approx(p21).epsilon(1e-9));
  CHECK(t.rows[0].rate[1] == doctest::Approx(laplace_numeric(100e3, 250e3)).epsilon(1e-6));
  CHECK(t.rows[0].rate[2] == 0);
  CHECK(t.message_share[0] == doctest::Approx((p12 + p21) / 2).epsilon(1e-9));
  // 5000 messages at ~46% each: a violation is certain; perfect clocks never violate.
  CHECK(t.rows[0].violated[0] == doctest::Approx(1));
  CHECK(t.pairs_violated_share[2] == 0);

  const auto text =
      render_what_if(t, [](skewscope::DomainId d) { return d == 1 ? std::string("pre") : std::string("infer"); });
  CHECK(text.find("gaussian:1ms") != std::string::npos);
  CHECK(text.find("pre") != std::string::npos);
  CHECK(text.find("infer") != std::string::npos);
  CHECK(text.find("pairs violated") != std::string::npos);
}

TEST_CASE("what-if over a delay distribution equals the sample average, with observed negatives") {
  Estimator est;
  synth::Scenario sc;
  sc.ab = sc.ba = synth::Delay{synth::DelayKind::exponential, 20'000, 100'000};
  sc.theta_ns = [](double) { return -50e3; };  // some 1 → 2 spans are already negative
  synth::drive(est, synth::generate(sc, 0, 30), 0, 30, 1.0, [](std::int64_t) {});
  const std::int64_t now = 30'000'000'000;
  const ErrorModel g{ErrorKind::gaussian, 50e3, "gaussian:50us"};
  const auto t = what_if(est, {g}, now);
  REQUIRE(t.rows.size() == 2);
  double rate = 0, weight = 0;
  for (const auto& ws : est.samples(1, 2, now)) {
    rate += ws.weight * inversion_probability(g, static_cast<double>(ws.span_ns));
    weight += ws.weight;
  }
  CHECK(t.rows[0].rate[0] == doctest::Approx(rate / weight));
  CHECK(weight == doctest::Approx(static_cast<double>(t.rows[0].window_spans)));
  CHECK(t.rows[0].observed_negative_ratio > 0);
  CHECK(t.rows[1].observed_negative_ratio == 0);
  CHECK(t.rows[0].rate[0] > t.rows[1].rate[0]);
  // Re-aligned to the estimate first, both directions look alike again.
  const auto aligned = what_if(est, {g}, now, WhatIfOptions{true});
  CHECK(aligned.rows[0].rate[0] == doctest::Approx(aligned.rows[1].rate[0]).epsilon(0.2));
}
