// The offset interval from timestamp constraints, allowing the offset to drift linearly.
//
// A message low→high with span s arriving at time t says θ(t) ≤ s; one high→low with span s'
// says θ(t) ≥ −s'. Intersecting them as if θ were constant ([max lower, min upper]) is exact for
// fixed clocks but misses a drifting offset: over a 30 s window, 20 ppm moves θ by 600 µs, far
// more than a LAN's delays. So θ is modelled as θ(t) = θ₀ + ρ·t with |ρ| ≤ ρ_max, and the
// interval reported for θ₀ (the offset at t = 0, the evaluation time) is the projection of the
// feasible (θ₀, ρ) polygon. With ρ_max = 0 it is exactly [max lower, min upper]. When traffic
// covers the window the constraints pin ρ, so the interval stays about as narrow as the plain one.
#pragma once

#include <optional>
#include <span>

namespace skewscope::estimate {

struct Constraint {
  double t_s = 0;       // seconds relative to the evaluation time (negative: in the past)
  double value_ns = 0;  // θ(t) ≤ value when upper, θ(t) ≥ value otherwise
  bool upper = true;
};

struct IntervalSolution {
  bool feasible = true;            // false: no line with |ρ| ≤ ρ_max meets every constraint
  std::optional<double> lower_ns;  // bounds on θ at t = 0; absent on a side with no constraint
  std::optional<double> upper_ns;
  double rho_lo = 0, rho_hi = 0;  // feasible slopes, ns per second (1 ppm = 1000 ns/s)
};

// Exact for the linear model: a linear objective over a polygon peaks at a vertex, and every vertex
// lies at ρ = ±ρ_max or where two constraint lines cross. O(n³) for n constraints, so callers keep
// n small (two per bucket, at most 128).
IntervalSolution solve_interval(std::span<const Constraint> constraints, double rho_max_ns_per_s);
// The same with an asymmetric slope range [rho_min, rho_max].
IntervalSolution solve_interval(std::span<const Constraint> constraints, double rho_min_ns_per_s,
                                double rho_max_ns_per_s);

}  // namespace skewscope::estimate
