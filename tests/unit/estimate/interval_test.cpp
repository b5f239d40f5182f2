#include <doctest/doctest.h>

#include <vector>

#include "estimate/interval.hpp"

using skewscope::estimate::Constraint;
using skewscope::estimate::solve_interval;

TEST_CASE("without drift the interval is the plain intersection [max lower, min upper]") {
  std::vector<Constraint> c{{-3, 120, true}, {-2, 80, true}, {-1, -40, false}, {-0.5, -10, false}};
  auto s = solve_interval(c, 0);
  REQUIRE(s.feasible);
  CHECK(*s.lower_ns == doctest::Approx(-10));
  CHECK(*s.upper_ns == doctest::Approx(80));
}

TEST_CASE("one side only gives a one-sided bound") {
  std::vector<Constraint> c{{-1, 50, true}, {-2, 70, true}};
  auto s = solve_interval(c, 0);
  REQUIRE(s.feasible);
  CHECK_FALSE(s.lower_ns.has_value());
  CHECK(*s.upper_ns == doctest::Approx(50));
  // With drift allowed, the bound on θ now loosens by ρ_max × age of the tightest constraint.
  auto d = solve_interval(c, 1000);             // 1 ppm
  CHECK(*d.upper_ns == doctest::Approx(1050));  // 1 ppm = 1000 ns per second of age
}

TEST_CASE("contradicting constraints are infeasible") {
  std::vector<Constraint> c{{-1, 10, true}, {-1, 30, false}};
  CHECK_FALSE(solve_interval(c, 0).feasible);
  CHECK_FALSE(solve_interval(c, 1e6).feasible);  // same instant: no slope can help
}

TEST_CASE("a drifting offset is followed and its slope recovered") {
  // θ(t) = 500 + 20000·t ns (20 ppm), delays 30 ns each way, a bucket per second over 20 s.
  std::vector<Constraint> c;
  for (int k = 20; k >= 1; --k) {
    const double t = -k, theta = 500 + 20000 * t;
    c.push_back({t, theta + 30, true});
    c.push_back({t + 0.3, theta + 20000 * 0.3 - 30, false});
  }
  auto plain = solve_interval(c, 0);
  CHECK_FALSE(plain.feasible);  // the constant-offset model cannot hold 400 µs of drift
  auto s = solve_interval(c, 200'000);
  REQUIRE(s.feasible);
  CHECK(*s.lower_ns <= 500);
  CHECK(*s.upper_ns >= 500);
  CHECK(*s.upper_ns - *s.lower_ns < 200);
  CHECK(s.rho_lo <= 20000);
  CHECK(s.rho_hi >= 20000);
  CHECK(s.rho_hi - s.rho_lo < 10);
}

TEST_CASE("large absolute offsets keep nanosecond resolution") {
  const double big = 3.6e12;  // clocks an hour apart
  std::vector<Constraint> c{{-1, big + 40, true}, {-0.5, big - 60, false}};
  auto s = solve_interval(c, 0);
  REQUIRE(s.feasible);
  CHECK(*s.upper_ns - big == doctest::Approx(40).epsilon(1e-6));
  CHECK(*s.lower_ns - big == doctest::Approx(-60).epsilon(1e-6));
}
