#include "clocks/phc_mapping.hpp"

#include <algorithm>
#include <cmath>

namespace skewscope::clocks {

PhcReadingPoint reading_from(const PhcOffset& offset, std::int64_t sys_ns) {
  return {sys_ns - offset.offset_ns, offset.offset_ns, (offset.interval_ns + 1) / 2};
}

std::optional<PhcReadingPoint> reading_from(const PhcSample& s) {
  auto best = best_sample(std::span<const PhcSample>(&s, 1));
  if (!best) return std::nullopt;
  return PhcReadingPoint{s.phc_ns, best->offset_ns, (best->interval_ns + 1) / 2};
}

bool PhcMapping::add(const PhcReadingPoint& r) {
  if (!readings_.empty()) {
    const PhcReadingPoint& last = readings_.back();
    if (r.phc_ns <= last.phc_ns) return false;
    // The offset may move by the rate difference times the gap, plus both readings' brackets.
    const double gap = static_cast<double>(r.phc_ns - last.phc_ns);
    const double allowed =
        config_.max_rate_ppm * 1e-6 * gap + static_cast<double>(r.half_bracket_ns + last.half_bracket_ns);
    if (std::fabs(static_cast<double>(r.offset_ns - last.offset_ns)) > allowed) {
      readings_.clear();  // a step: readings before it describe another timescale
      ++restarts_;
    }
  }
  readings_.push_back(r);
  while (readings_.size() > config_.keep) readings_.pop_front();
  return true;
}

std::optional<MappedStamp> PhcMapping::map(std::int64_t phc_ns) const {
  if (readings_.empty()) return std::nullopt;
  // The pair of readings around the stamp, or the newest two (extrapolation), or the only one.
  auto after = std::lower_bound(readings_.begin(), readings_.end(), phc_ns,
                                [](const PhcReadingPoint& r, std::int64_t t) { return r.phc_ns < t; });
  const PhcReadingPoint* a = nullptr;
  const PhcReadingPoint* b = nullptr;
  if (readings_.size() == 1) {
    a = &readings_.front();
  } else if (after == readings_.begin()) {
    a = &readings_[0];
    b = &readings_[1];
  } else if (after == readings_.end()) {
    a = &readings_[readings_.size() - 2];
    b = &readings_.back();
  } else {
    a = &*std::prev(after);
    b = &*after;
  }
  const PhcReadingPoint& nearest = !b || std::llabs(phc_ns - a->phc_ns) <= std::llabs(phc_ns - b->phc_ns) ? *a : *b;
  const double distance = std::fabs(static_cast<double>(phc_ns - nearest.phc_ns));
  if (distance > static_cast<double>(config_.max_extrapolation_ns)) return std::nullopt;
  double offset = static_cast<double>(a->offset_ns);
  double uncertainty = 0;
  if (b) {
    const double slope = static_cast<double>(b->offset_ns - a->offset_ns) / static_cast<double>(b->phc_ns - a->phc_ns);
    offset += slope * static_cast<double>(phc_ns - a->phc_ns);
    uncertainty = static_cast<double>(std::max(a->half_bracket_ns, b->half_bracket_ns)) +
                  config_.max_rate_change_ppm * 1e-6 * distance;
  } else {
    uncertainty = static_cast<double>(a->half_bracket_ns) + config_.max_rate_ppm * 1e-6 * distance;
  }
  return MappedStamp{phc_ns + static_cast<std::int64_t>(std::llround(offset)),
                     static_cast<std::int64_t>(std::ceil(uncertainty))};
}

}  // namespace skewscope::clocks
