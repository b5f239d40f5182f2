// Loop consistency: around any triangle of domains the true offsets sum to zero,
// θ_AB + θ_BC + θ_CA = (B−A) + (C−B) + (A−C) = 0. Each estimate lies within its bound of the truth
// whenever its interval holds the truth, so |Σθ̂| > Σbound proves that at least one of the three
// intervals misses — a clock that moved within the window, or spans that are not what they claim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "estimate/estimator.hpp"

namespace skewscope::estimate {

struct TriangleBreak {
  DomainId a = 0, b = 0, c = 0;  // a < b < c
  double sum_ns = 0;             // θ̂_ab + θ̂_bc + θ̂_ca
  double tolerance_ns = 0;       // bound_ab + bound_bc + bound_ca
};

struct DomainImplication {
  DomainId domain = 0;
  std::size_t broken = 0;     // broken triangles that contain the domain
  std::size_t triangles = 0;  // checked triangles that contain the domain
};

struct TriangleReport {
  std::size_t checked = 0;
  std::size_t broken_total = 0;
  std::vector<TriangleBreak> broken;  // the first max_reported, by (a, b, c)
  // Domains in at least one broken triangle, most broken first. A single triangle cannot tell which
  // of its three domains is at fault (all tie); with more domains, a bad clock breaks every
  // triangle it is in while its neighbours' other triangles stay closed.
  std::vector<DomainImplication> implicated;
  std::vector<DomainId> most_implicated;  // the domains sharing the highest broken count
};

// Uses only estimates with a two-sided interval (offset and bound present, not empty). Work is
// O(edges × degree); max_domains caps the domains considered (lowest ids kept) to bound it.
TriangleReport check_triangles(const std::vector<PairEstimate>& estimates, std::size_t max_reported = 64,
                               std::size_t max_domains = 512);

}  // namespace skewscope::estimate
