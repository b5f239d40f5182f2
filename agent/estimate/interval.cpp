#include "estimate/interval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace skewscope::estimate {

IntervalSolution solve_interval(std::span<const Constraint> constraints, double rho_max) {
  return solve_interval(constraints, -std::fabs(rho_max), std::fabs(rho_max));
}

IntervalSolution solve_interval(std::span<const Constraint> constraints, double rho_min, double rho_max) {
  IntervalSolution out;
  if (rho_min > rho_max) std::swap(rho_min, rho_max);
  bool any_upper = false, any_lower = false;
  // Work relative to one constraint's value: offsets of seconds (1e9 ns) would otherwise cost
  // the digits that the microsecond-scale differences need.
  const double ref = constraints.empty() ? 0 : constraints.front().value_ns;
  double scale = 1;
  for (const auto& c : constraints) {
    (c.upper ? any_upper : any_lower) = true;
    scale = std::max(scale, std::fabs(c.value_ns - ref));
  }
  if (constraints.empty()) {
    out.rho_lo = rho_min;
    out.rho_hi = rho_max;
    return out;
  }
  // Rounding when two lines cross must not turn a touching vertex into an infeasible one.
  const double tol = 1e-3 + 1e-12 * scale;

  std::vector<double> rhos{rho_min, rho_max};
  for (std::size_t i = 0; i < constraints.size(); ++i)
    for (std::size_t j = i + 1; j < constraints.size(); ++j) {
      const double dt = constraints[i].t_s - constraints[j].t_s;
      if (std::fabs(dt) < 1e-12) continue;
      // θ₀ = v − ρ·t on each line; equal where ρ = (v_i − v_j) / (t_i − t_j).
      const double rho = (constraints[i].value_ns - constraints[j].value_ns) / dt;
      if (rho > rho_min && rho < rho_max) rhos.push_back(rho);
    }

  constexpr double inf = std::numeric_limits<double>::infinity();
  double best_lo = inf, best_hi = -inf, rho_lo = inf, rho_hi = -inf;
  for (double rho : rhos) {
    double lo = -inf, hi = inf;
    for (const auto& c : constraints) {
      const double v = (c.value_ns - ref) - rho * c.t_s;
      if (c.upper)
        hi = std::min(hi, v);
      else
        lo = std::max(lo, v);
    }
    if (lo > hi + tol) continue;
    if (lo > hi) lo = hi = (lo + hi) / 2;  // within rounding: a single point
    best_lo = std::min(best_lo, lo);
    best_hi = std::max(best_hi, hi);
    rho_lo = std::min(rho_lo, rho);
    rho_hi = std::max(rho_hi, rho);
  }
  if (rho_lo > rho_hi) {
    out.feasible = false;
    return out;
  }
  if (any_lower) out.lower_ns = best_lo + ref;
  if (any_upper) out.upper_ns = best_hi + ref;
  out.rho_lo = rho_lo;
  out.rho_hi = rho_hi;
  return out;
}

}  // namespace skewscope::estimate
