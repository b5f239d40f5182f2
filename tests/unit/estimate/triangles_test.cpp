#include <doctest/doctest.h>

#include <algorithm>

#include "estimate/triangles.hpp"
#include "synth.hpp"

using namespace skewscope::estimate;
using skewscope::DomainId;

namespace {

// Four domains with clocks offset by clock[d] (ns), all pairs talking both ways.
std::vector<PairEstimate> mesh(const std::vector<double>& clock) {
  Estimator est;
  std::vector<skewscope::Span> spans;
  for (DomainId a = 0; a < clock.size(); ++a)
    for (DomainId b = a + 1; b < clock.size(); ++b) {
      synth::Scenario sc;
      sc.a = a;
      sc.b = b;
      sc.seed = 100 + a * 10 + b;
      sc.ab = sc.ba = synth::Delay{synth::DelayKind::exponential, 20'000, 30'000};
      const double theta = clock[b] - clock[a];
      sc.theta_ns = [theta](double) { return theta; };
      auto s = synth::generate(sc, 0, 40);
      spans.insert(spans.end(), s.begin(), s.end());
    }
  std::stable_sort(spans.begin(), spans.end(), [](auto& x, auto& y) { return x.capture_ns < y.capture_ns; });
  synth::drive(est, spans, 0, 40, 1.0, [](std::int64_t) {});
  return est.estimates();
}

}  // namespace

TEST_CASE("consistent clocks close every triangle") {
  const auto r = check_triangles(mesh({0, 300e3, -2e6, 50e3}));
  CHECK(r.checked == 4);  // C(4,3)
  CHECK(r.broken_total == 0);
  CHECK(r.implicated.empty());
}

TEST_CASE("a broken loop of three is detected; one loop cannot say which domain is at fault") {
  auto est = mesh({0, 300e3, -2e6});
  // Edge 1-2 claims 500 µs more than the traffic of the other two edges allows, as a pairing bug
  // or a clock stepped mid-window would.
  for (auto& e : est) {
    if (e.src == 1 && e.dst == 2) *e.offset_ns += 500e3;
    if (e.src == 2 && e.dst == 1) *e.offset_ns -= 500e3;
  }
  const auto r = check_triangles(est);
  CHECK(r.checked == 1);
  CHECK(r.broken_total == 1);
  REQUIRE(r.broken.size() == 1);
  CHECK(r.broken[0].sum_ns == doctest::Approx(500e3).epsilon(0.02));
  CHECK(std::fabs(r.broken[0].sum_ns) > r.broken[0].tolerance_ns);
  CHECK(r.most_implicated == std::vector<DomainId>{0, 1, 2});
}

TEST_CASE("one bad domain among five is singled out") {
  auto est = mesh({0, 100e3, 200e3, 300e3, 400e3});
  for (auto& e : est) {  // every edge of domain 4 disagrees by a different amount
    if (e.src != 4 && e.dst != 4) continue;
    const double shift = 200e3 * (1 + std::min(e.src, e.dst));
    *e.offset_ns += e.dst == 4 ? shift : -shift;
  }
  const auto r = check_triangles(est);
  CHECK(r.checked == 10);
  CHECK(r.broken_total == 6);  // every triangle through 4
  CHECK(r.most_implicated == std::vector<DomainId>{4});
}

TEST_CASE("one-sided and empty estimates are left out") {
  auto est = mesh({0, 300e3, -2e6});
  for (auto& e : est)
    if (e.src == 0 && e.dst == 1) e.empty_interval = true;
  CHECK(check_triangles(est).checked == 1);  // the reverse orientation still carries the edge
  for (auto& e : est)
    if ((e.src == 0 && e.dst == 1) || (e.src == 1 && e.dst == 0)) e.offset_ns.reset();
  CHECK(check_triangles(est).checked == 0);
}
