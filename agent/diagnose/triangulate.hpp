// Culprit by triangulation: a host whose clock is wrong shifts every pair it is in by the same
// amount while the pairs among the other hosts stay consistent (docs/diagnosis.md, "Culprit").
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace skewscope::diagnose {

// One pair's value of the quantity being triangulated (a step, a slope or an offset), θ = dst − src.
struct PairMeasure {
  std::string src, dst;
  double value = 0;
  double tolerance = 0;  // |value| ≤ tolerance: consistent with no shift
  bool tight_ok = true;  // may count as tight (see `tight` below) whatever its tolerance says
  // Moved for certain though its value is not measured yet (a broken window): a host outside it
  // does not fit, one in it may (the value, 0 ± ∞, agrees with any shift).
  bool moved = false;
};

struct Triangulation {
  std::optional<std::string> culprit;  // absent: undetermined
  // The culprit's own shift (its clock minus the others'); absent while every pair of it moved
  // without a measured value (a floor that fell).
  std::optional<double> amount;
  std::vector<std::string> shifted;     // the pairs it is in ("src→dst")
  std::vector<std::string> consistent;  // the pairs among the other hosts
  // When more than one host fits: each of them (by name). The culprit is one of them, and the
  // pairs do not yet tell which (a pair that has not cleared its tolerance, say). Empty otherwise.
  std::vector<std::string> candidates;
  std::string note;  // why the culprit is named, or why none can be
};

// `floor` is added to every tolerance (a slope threshold, say). Needs a pair without the culprit,
// so at least three hosts; exactly one host must fit: the pairs without it consistent, its own pairs
// agreeing on one shift, at least one of them beyond its tolerance or `moved` (docs/diagnosis.md,
// "Culprit").
// A pair without the host whose own tolerance is above `tight` (or, with `tight` finite, one not
// `tight_ok`) is consistent only because it is not yet measured well enough to show a shift of its
// own: the host then fits at best "not yet" (it is a candidate, not the culprit).
Triangulation triangulate(const std::vector<PairMeasure>& measures, double floor = 0,
                          double tight = std::numeric_limits<double>::infinity());

}  // namespace skewscope::diagnose
