#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "estimate/correct.hpp"
#include "estimate/json.hpp"
#include "synth.hpp"

using namespace skewscope::estimate;

namespace {

PairEstimate two_sided(double lower, double upper) {
  PairEstimate e;
  e.src = 1;
  e.dst = 2;
  e.lower_ns = lower;
  e.upper_ns = upper;
  e.offset_ns = (lower + upper) / 2;
  e.bound_ns = (upper - lower) / 2;
  return e;
}

skewscope::Span span(std::int64_t send, std::int64_t recv) {
  return {1, 2, skewscope::Transport::tcp, send, recv, 0, 0};
}

std::string name(skewscope::DomainId d) { return d == 1 ? "pre" : "infer"; }

}  // namespace

TEST_CASE("corrected receive is an extra field; raw timestamps stay") {
  const auto e = two_sided(280e3, 320e3);  // θ̂ = 300 µs ± 20 µs
  const auto c = correct_span(span(1'000'000, 1'350'000), e);
  CHECK(c.send_ns == 1'000'000);
  CHECK(c.recv_ns == 1'350'000);
  REQUIRE(c.corrected);
  CHECK(*c.correction_ns == 300'000);
  CHECK(*c.corrected_recv_ns == 1'050'000);
  CHECK(*c.bound_ns == 20'000);
  CHECK_FALSE(c.clamped);
  CHECK_FALSE(c.capped);

  // The reverse direction uses −θ̂: a 2 → 1 message has its receive in 1's clock.
  skewscope::Span back{2, 1, skewscope::Transport::tcp, 2'000'000, 1'750'000, 0, 0};
  const auto r = correct_span(back, e);
  REQUIRE(r.corrected);
  CHECK(*r.correction_ns == -300'000);
  CHECK(*r.corrected_recv_ns == 2'050'000);
}

TEST_CASE("no correction without a two-sided, consistent estimate") {
  PairEstimate one;
  one.src = 1;
  one.dst = 2;
  one.upper_ns = 300e3;
  CHECK_FALSE(correct_span(span(0, 350'000), one).corrected);
  auto empty = two_sided(280e3, 320e3);
  empty.empty_interval = true;
  CHECK_FALSE(correct_span(span(0, 350'000), empty).corrected);
  skewscope::Span other{3, 4, skewscope::Transport::tcp, 0, 1, 0, 0};
  CHECK_FALSE(correct_span(other, two_sided(0, 10)).corrected);
}

TEST_CASE("corrections never invert a message and respect the cap") {
  const auto e = two_sided(280e3, 320e3);
  const auto c = correct_span(span(0, 290'000), e);  // the midpoint would give −10 µs
  CHECK(c.clamped);
  CHECK(*c.correction_ns == 290'000);
  CHECK(*c.corrected_recv_ns == 0);
  const auto capped = correct_span(span(0, 1'000'000), e, 100'000);
  CHECK(capped.capped);
  CHECK(*capped.correction_ns == 100'000);
  CHECK(capped.recv_ns == 1'000'000);
}

TEST_CASE("the cap /api/v1/spans passes: a correction beyond 1 s is clamped to it and flagged") {
  // Clocks 3 s apart (θ̂ = 3 s ± 1 ms), and a message whose span is 3.0005 s.
  const auto e = two_sided(2.999e9, 3.001e9);
  const auto c = correct_span(span(0, 3'000'500'000), e, kMaxExportedCorrectionNs);
  REQUIRE(c.corrected);
  CHECK(c.capped);
  CHECK(*c.correction_ns == kMaxExportedCorrectionNs);
  CHECK(*c.corrected_recv_ns == 3'000'500'000 - kMaxExportedCorrectionNs);
  CHECK(c.recv_ns == 3'000'500'000);  // raw stays
  const auto j = to_json(c);
  CHECK(j["capped"] == true);
  // Negative side too, and a correction within the cap is not flagged.
  const auto neg = correct_span(span(3'000'000'000, 100), two_sided(-3.001e9, -2.999e9), kMaxExportedCorrectionNs);
  CHECK(neg.capped);
  CHECK(*neg.correction_ns == -kMaxExportedCorrectionNs);
  const auto small = correct_span(span(0, 350'000), two_sided(280e3, 320e3), kMaxExportedCorrectionNs);
  CHECK_FALSE(small.capped);
  CHECK(*small.correction_ns == 300'000);
}

TEST_CASE("corrections saturate instead of wrapping at the int64 limits") {
  const std::int64_t near_max = std::numeric_limits<std::int64_t>::max() - 10;
  // A receive near the limit corrected by a negative offset must not wrap to a negative time.
  const auto c = correct_span(span(near_max - 100, near_max), two_sided(-1e9, -0.5e9));
  REQUIRE(c.corrected);
  CHECK(*c.corrected_recv_ns == std::numeric_limits<std::int64_t>::max());
  // A span between the two ends of the int64 range saturates instead of flipping sign.
  skewscope::Span wide{1, 2, skewscope::Transport::tcp, std::numeric_limits<std::int64_t>::min(), near_max, 0, 0};
  CHECK(wide.span_ns() == std::numeric_limits<std::int64_t>::max());
  skewscope::Span back{1, 2, skewscope::Transport::tcp, near_max, std::numeric_limits<std::int64_t>::min(), 0, 0};
  CHECK(back.span_ns() == -std::numeric_limits<std::int64_t>::max());  // negatable
}

TEST_CASE("JSON: seconds, and null where the window does not tell") {
  PairEstimate one;
  one.src = 1;
  one.dst = 2;
  one.upper_ns = 300e3;
  one.forward_spans = 10;
  auto j = to_json(one, name);
  CHECK(j["src"] == "pre");
  CHECK(j["dst"] == "infer");
  CHECK(j["offset_seconds"].is_null());
  CHECK(j["offset_bound_seconds"].is_null());
  CHECK(j["offset_lower_bound_seconds"].is_null());
  CHECK(j["offset_upper_bound_seconds"].get<double>() == doctest::Approx(300e-6));
  CHECK(j["delta_t_min_seconds"].is_null());
  CHECK(j["at_risk"].is_null());
  CHECK(j["drift_ppm"].is_null());

  // From a real run: every field present and consistent with the struct.
  synth::Scenario sc;
  sc.theta_ns = [](double) { return 2e6; };
  Estimator est;
  synth::drive(est, synth::generate(sc, 0, 40), 0, 40, 1.0, [](std::int64_t) {});
  const auto e = *est.estimate(1, 2);
  j = to_json(e, name);
  CHECK(j["offset_seconds"].get<double>() == doctest::Approx(*e.offset_ns * 1e-9));
  CHECK(j["offset_bound_seconds"].get<double>() == doctest::Approx(*e.bound_ns * 1e-9));
  CHECK(j["offset_seconds"].get<double>() == doctest::Approx(2e-3).epsilon(0.01));
  CHECK(j["at_risk"] == true);  // 2 ms against a 20 µs Δt_min: it is already inverting
  CHECK(j["inversion_margin_seconds"]["forward"].is_number());
  CHECK(j["estimate_window"]["forward_spans"].get<std::uint64_t>() == e.forward_spans);

  const auto c = to_json(correct_span(span(0, 2'100'000), e));
  CHECK(c["recv_ns"] == 2'100'000);
  CHECK(c["corrected"] == true);
  CHECK(to_json(est.counters())["spans"].get<std::uint64_t>() == est.counters().spans);
  CHECK(to_json(check_triangles(est.estimates()), name)["checked"] == 0);
  const auto w = to_json(what_if(est, *parse_error_models("gaussian:1ms"), 40'000'000'000), name);
  CHECK(w["pairs"].size() == 2);
  CHECK(w["misordered_share"].size() == 1);
}
