#include "diagnose/triangulate.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace skewscope::diagnose {

namespace {
std::string pair_name(const PairMeasure& m) { return m.src + "→" + m.dst; }
}  // namespace

Triangulation triangulate(const std::vector<PairMeasure>& measures, double floor, double tight) {
  Triangulation t;
  std::set<std::string> hosts;
  for (const auto& m : measures) {
    hosts.insert(m.src);
    hosts.insert(m.dst);
  }
  if (hosts.size() < 3) {
    t.note = "only two hosts measured: a shift between them cannot be given to either";
    return t;
  }
  std::vector<Triangulation> fits;
  std::vector<std::string> not_yet;  // hosts that fit while a pair without them is not yet tight
  std::size_t wide_pairs = 0;        // of the first of them
  for (const auto& h : hosts) {
    Triangulation c;
    c.culprit = h;
    bool fits_all = true;
    std::size_t wide = 0;                           // pairs without h consistent only within a tolerance above `tight`
    bool moved = false;                             // at least one of h's pairs cleared its tolerance
    std::vector<std::pair<double, double>> shifts;  // the host's own shift per pair, with tolerance
    for (const auto& m : measures) {
      const double tol = m.tolerance + floor;
      if (m.src == h || m.dst == h) {
        // A host's clock ahead by s raises θ = dst − src when it is dst, lowers it when src.
        const double own = m.dst == h ? m.value : -m.value;
        moved = moved || m.moved || std::abs(own) > tol;
        shifts.emplace_back(own, tol);
        c.shifted.push_back(pair_name(m));
      } else {
        if (m.moved || std::abs(m.value) > tol) fits_all = false;
        if (m.tolerance > tight || (!m.tight_ok && std::isfinite(tight))) ++wide;
        c.consistent.push_back(pair_name(m));
      }
    }
    if (!fits_all || !moved || c.consistent.empty()) continue;
    // Every pair of h agrees with every other on one shift; a pair that has not yet cleared its
    // own tolerance (a slope measured over a shorter time) still has to agree with those that did.
    double sum = 0;
    std::size_t cleared = 0;
    for (std::size_t i = 0; i < shifts.size(); ++i) {
      if (std::abs(shifts[i].first) > shifts[i].second) {
        sum += shifts[i].first;
        ++cleared;
      }
      for (std::size_t j = i + 1; j < shifts.size(); ++j)
        if (std::abs(shifts[i].first - shifts[j].first) > shifts[i].second + shifts[j].second) fits_all = false;
    }
    if (!fits_all) continue;
    if (wide > 0) {
      if (not_yet.empty()) wide_pairs = wide;
      not_yet.push_back(h);
      continue;
    }
    if (cleared > 0)
      c.amount = sum / static_cast<double>(cleared);  // the pairs that measured it beyond their tolerance
    fits.push_back(std::move(c));
  }
  if (!not_yet.empty()) {
    // A pair among the others still too wide to show a shift of its own: it may be moving too.
    std::set<std::string> all(not_yet.begin(), not_yet.end());
    for (const auto& c : fits) all.insert(*c.culprit);
    t.candidates.assign(all.begin(), all.end());
    char tol[32];
    std::snprintf(tol, sizeof tol, "%g", tight);
    t.note = not_yet.front() + " explains the pairs it is in, but " + std::to_string(wide_pairs) +
             " pair(s) among the others cannot yet show a shift of their own (a tolerance above " + tol +
             ", or inverted or broken with no slope yet): culprit not yet known";
    if (t.candidates.size() > 1) t.note += " (one of " + std::to_string(t.candidates.size()) + ")";
    return t;
  }
  if (fits.size() == 1) {
    t = std::move(fits.front());
    t.note = "every pair " + *t.culprit + " is in moved " +
             (t.amount ? std::string("by the same amount") : std::string("(by how much is not measured yet)")) +
             ", the " + std::to_string(t.consistent.size()) + " pair(s) among the others did not";
    return t;
  }
  if (fits.empty()) {
    t.note = "no single host explains every pair (more than one clock moved, or too few pairs measured)";
    return t;
  }
  for (const auto& c : fits) t.candidates.push_back(*c.culprit);  // in name order, as `hosts`
  t.note = "more than one host explains the pairs: one of " + std::to_string(t.candidates.size()) + ", not yet which";
  return t;
}

}  // namespace skewscope::diagnose
