#include "estimate/triangles.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace skewscope::estimate {
namespace {

struct Edge {
  double offset_ns;  // θ = clock_high − clock_low
  double bound_ns;
};

}  // namespace

TriangleReport check_triangles(const std::vector<PairEstimate>& estimates, std::size_t max_reported,
                               std::size_t max_domains) {
  std::set<DomainId> domains;
  for (const auto& e : estimates)
    if (e.offset_ns && e.bound_ns && !e.empty_interval) {
      domains.insert(e.src);
      domains.insert(e.dst);
    }
  while (domains.size() > max_domains) domains.erase(std::prev(domains.end()));

  std::map<std::pair<DomainId, DomainId>, Edge> edges;
  std::map<DomainId, std::vector<DomainId>> higher;  // neighbours with a larger id
  for (const auto& e : estimates) {
    if (!e.offset_ns || !e.bound_ns || e.empty_interval) continue;
    if (!domains.count(e.src) || !domains.count(e.dst)) continue;
    const bool flip = e.src > e.dst;
    const auto k = std::minmax(e.src, e.dst);
    if (edges.emplace(std::pair{k.first, k.second}, Edge{flip ? -*e.offset_ns : *e.offset_ns, *e.bound_ns}).second)
      higher[k.first].push_back(k.second);
  }
  for (auto& [d, v] : higher) std::sort(v.begin(), v.end());

  TriangleReport report;
  std::map<DomainId, DomainImplication> per_domain;
  for (const auto& [a, nb] : higher) {
    for (std::size_t i = 0; i < nb.size(); ++i) {
      const DomainId b = nb[i];
      auto hb = higher.find(b);
      if (hb == higher.end()) continue;
      for (std::size_t j = i + 1; j < nb.size(); ++j) {
        const DomainId c = nb[j];
        if (!std::binary_search(hb->second.begin(), hb->second.end(), c)) continue;
        const Edge& ab = edges.at({a, b});
        const Edge& bc = edges.at({b, c});
        const Edge& ac = edges.at({a, c});
        const double sum = ab.offset_ns + bc.offset_ns - ac.offset_ns;  // θ_ca = −θ_ac
        const double tol = ab.bound_ns + bc.bound_ns + ac.bound_ns;
        ++report.checked;
        const bool broken = std::fabs(sum) > tol;
        for (DomainId d : {a, b, c}) {
          auto& imp = per_domain[d];
          imp.domain = d;
          ++imp.triangles;
          imp.broken += broken;
        }
        if (!broken) continue;
        ++report.broken_total;
        if (report.broken.size() < max_reported) report.broken.push_back({a, b, c, sum, tol});
      }
    }
  }
  for (const auto& [d, imp] : per_domain)
    if (imp.broken) report.implicated.push_back(imp);
  std::stable_sort(report.implicated.begin(), report.implicated.end(),
                   [](const DomainImplication& x, const DomainImplication& y) { return x.broken > y.broken; });
  for (const auto& imp : report.implicated)
    if (imp.broken == report.implicated.front().broken) report.most_implicated.push_back(imp.domain);
  return report;
}

}  // namespace skewscope::estimate
