#include "diagnose/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "diagnose/triangulate.hpp"

namespace skewscope::diagnose {

const char* cause_name(Cause c) {
  switch (c) {
    case Cause::none: return "none";
    case Cause::clock_step: return "clock_step";
    case Cause::clock_drift: return "clock_drift";
    case Cause::ptp_lost: return "ptp_lost";
    case Cause::clock_source_disagrees: return "clock_source_disagrees";
    case Cause::path_asymmetry: return "path_asymmetry";
    case Cause::capture_incomplete: return "capture_incomplete";
    case Cause::undetermined: return "undetermined";
  }
  return "undetermined";
}

std::optional<Cause> cause_from_name(const std::string& name) {
  for (std::size_t i = 0; i < kCauseCount; ++i)
    if (name == cause_name(static_cast<Cause>(i))) return static_cast<Cause>(i);
  return std::nullopt;
}

std::string format_ns(double ns) {
  char buf[48];
  const double a = std::abs(ns);
  if (!std::isfinite(ns)) return "?";
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%+.3f s", ns * 1e-9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%+.3f ms", ns * 1e-6);
  else if (a >= 1e3)
    std::snprintf(buf, sizeof buf, "%+.1f µs", ns * 1e-3);
  else
    std::snprintf(buf, sizeof buf, "%+.0f ns", ns);
  return buf;
}

bool ptp_lost(const HostClock& clock) {
  if (!clock.readings || !clock.ptp) return false;
  if (clock.status == "disrupted") return true;
  if (clock.gm_present && !*clock.gm_present) return true;
  return clock.port_state && *clock.port_state != "SLAVE" && *clock.port_state != "UNCALIBRATED";
}

namespace {

// How far the evidence clears what the bounds alone explain: 0 at the tolerance, 1 far beyond.
double clearance(double value, double tolerance) {
  if (!std::isfinite(value) || value == 0) return 0;
  return std::clamp(1.0 - std::abs(tolerance) / std::abs(value), 0.0, 1.0);
}

std::string ppm(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f ppm", v);
  return buf;
}

std::string offset_text(const OffsetSample& s) {
  if (!s.offset_ns || !s.bound_ns) return "no two-sided offset";
  return "offset " + format_ns(*s.offset_ns) + " ± " + format_ns(*s.bound_ns).substr(1);
}

// "least span a→b fell 15.0 µs over the last 0.75 s": which floor fell, by how much, since when.
std::string floor_fell_text(const PairObservation& p, const FloorFall& f, const char* since_words) {
  char gap[32];
  std::snprintf(gap, sizeof gap, "%.2f s", static_cast<double>(p.now.t_ns - f.since_ns) * 1e-9);
  return "least span " + (f.forward ? p.src + "→" + p.dst : p.dst + "→" + p.src) + " fell " +
         format_ns(f.fall_ns).substr(1) + " " + since_words + " " + gap;
}

void fill_measures(PairDiagnosis& d, const PairObservation& p, const Config& config) {
  const bool changed = p.shift && p.shift->kind != Cause::none;
  if (changed && p.shift->kind == Cause::clock_step)
    d.step = Measure{p.shift->value, p.shift->tolerance};
  else if (!changed && (p.now.settled || p.history_settled) && p.now.offset_ns && p.now.bound_ns)
    d.step = Measure{0, 2 * *p.now.bound_ns};  // seen settled, no step since: a consistent pair
  // A floor that fell moved the offset as surely as a broken window, seconds before its interval
  // (as wide as the delays) can show it.
  d.moved_unmeasured = !changed && (p.negative_spans > 0 || p.now.broken || p.floor_fall);
  d.moved_certainly = !changed && (p.now.broken || p.floor_fall);
  if (changed && p.shift->kind == Cause::clock_drift) {
    d.drift = Measure{p.shift->value, p.shift->tolerance};
  } else {
    std::optional<Measure> own;  // the estimator's slope over its window
    if (p.now.drift_ppm && p.now.drift_bound_ppm) own = Measure{*p.now.drift_ppm, *p.now.drift_bound_ppm};
    const bool own_clears = own && std::abs(own->value) > own->tolerance + config.drift_threshold_ppm;
    // The history's steady slope, over a longer stretch, pins it tighter; not for a pair whose spans
    // invert (its offset reached the delay: it may be moving, however still its stretch looks) nor
    // one whose own slope is a drift (rule 4 names it).
    if (p.shift && p.shift->kind == Cause::none && p.negative_spans == 0 && !own_clears &&
        (!own || p.shift->tolerance < own->tolerance))
      d.drift = Measure{p.shift->value, p.shift->tolerance};
    else
      d.drift = own;
  }
  if (p.two_sided && !p.now.broken && p.now.offset_ns && p.now.bound_ns)
    d.offset = Measure{*p.now.offset_ns, *p.now.bound_ns};
}

}  // namespace

namespace {
PairDiagnosis diagnose_pair_rules(const PairObservation& p, const HostClock* src, const HostClock* dst,
                                  const Config& config) {
  PairDiagnosis d;
  d.src = p.src;
  d.dst = p.dst;
  fill_measures(d, p, config);
  const std::string spans = std::to_string(p.spans) + " spans, " + std::to_string(p.negative_spans) + " inverted (" +
                            std::to_string(p.unexplained_negative_spans) + " beyond the clocks' bounds)";
  // 1. Losses: an inversion may be hidden in what was lost, so nothing can be concluded.
  if (!p.capture_complete) {
    d.cause = Cause::capture_incomplete;
    d.confidence = 1;
    d.culprit_note = "halves were lost in the window: no clock can be judged";
    d.evidence = "capture incomplete; " + spans;
    return d;
  }
  // 2. A host's own clock source says it lost PTP.
  const bool src_lost = src && ptp_lost(*src), dst_lost = dst && ptp_lost(*dst);
  if (src_lost || dst_lost) {
    d.cause = Cause::ptp_lost;
    d.confidence = 1;
    if (src_lost != dst_lost) {
      const HostClock& lost = src_lost ? *src : *dst;
      d.culprit = lost.host;
      d.culprit_note = "its own ptp4l reports the loss";
      d.evidence = lost.host + ": ptp4l port " + lost.port_state.value_or("?") + ", grandmaster " +
                   (lost.gm_present ? (*lost.gm_present ? "present" : "absent") : "unknown") + ", clock " +
                   lost.status + "; " + offset_text(p.now);
    } else {
      d.culprit_note = "both hosts' ptp4l report a loss";
      d.evidence = "both hosts lost PTP; " + offset_text(p.now);
    }
    return d;
  }
  // 3. A step the history shows.
  if (p.shift && p.shift->kind == Cause::clock_step) {
    d.cause = Cause::clock_step;
    d.amount = p.shift->value;
    d.tolerance = p.shift->tolerance;
    d.since_ns = p.shift->at_ns;
    d.confidence = clearance(p.shift->value, p.shift->tolerance);
    d.evidence = "offset went from " + format_ns(p.shift->before_ns) + " to " + format_ns(p.shift->after_ns) +
                 " (step " + format_ns(p.shift->value) + ", bounds explain " + format_ns(p.shift->tolerance).substr(1) +
                 "); " + spans;
    return d;
  }
  // 4. A drift: from the history across a break, or the estimator's own pinned slope.
  std::optional<Measure> slope;
  std::optional<std::int64_t> since;
  if (p.shift && p.shift->kind == Cause::clock_drift) {
    slope = Measure{p.shift->value, p.shift->tolerance};
    since = p.shift->at_ns;
  } else if (p.now.drift_ppm && p.now.drift_bound_ppm &&
             std::abs(*p.now.drift_ppm) > *p.now.drift_bound_ppm + config.drift_threshold_ppm) {
    slope = Measure{*p.now.drift_ppm, *p.now.drift_bound_ppm};
  }
  if (slope) {
    d.cause = Cause::clock_drift;
    d.amount = slope->value;
    d.tolerance = slope->tolerance;
    d.since_ns = since;
    d.confidence = clearance(slope->value, slope->tolerance + config.drift_threshold_ppm);
    d.evidence = "offset moves " + ppm(slope->value) + " (± " + ppm(slope->tolerance).substr(1) + ", threshold " +
                 ppm(config.drift_threshold_ppm).substr(1) + "); " + offset_text(p.now) + "; " + spans;
    return d;
  }
  // ... or a floor that keeps falling (history, 7): the offset moves faster than the threshold,
  // its pace not measured yet (the interval, as wide as the delays, shows it later).
  if (p.floor_falling && (!p.shift || p.shift->kind == Cause::none)) {
    const FloorFall& f = *p.floor_falling;
    d.cause = Cause::clock_drift;
    d.since_ns = f.since_ns;
    d.confidence = clearance(f.fall_ns, f.allowed_ns);
    d.evidence_names_floor = true;
    d.evidence = floor_fell_text(p, f, "over the last") + ", every tick faster than " +
                 ppm(config.drift_threshold_ppm).substr(1) + ": the offset is moving, its pace not measured yet; " +
                 offset_text(p.now) + "; " + spans;
    return d;
  }
  // 5. The clocks claim bounds the traffic disproves.
  const std::optional<double> src_bound = src ? src->error_bound_ns : std::nullopt;
  const std::optional<double> dst_bound = dst ? dst->error_bound_ns : std::nullopt;
  std::optional<double> claimed;
  if (src_bound && dst_bound) claimed = *src_bound + *dst_bound;
  const bool offset_known = p.two_sided && p.now.settled && p.now.offset_ns && p.now.bound_ns;
  auto excess = [&](const OffsetSample& s) { return std::abs(*s.offset_ns) - *s.bound_ns > *claimed; };
  // Standing: already beyond the claim when the history first saw the pair settled. An excess
  // that grew since is a change the history has not yet classified (a drift in its first second).
  const bool beyond_claim = offset_known && claimed && excess(p.now) && p.first_settled && p.first_settled->offset_ns &&
                            p.first_settled->bound_ns && excess(*p.first_settled);
  // A standing excess only: inversions beyond the claim without a settled offset beyond it are a
  // change the history has not judged yet (the next estimator tick may show a step or a drift).
  if (beyond_claim) {
    d.cause = Cause::clock_source_disagrees;
    d.amount = *p.now.offset_ns;
    d.tolerance = *p.now.bound_ns + *claimed;
    d.confidence = clearance(*d.amount, *d.tolerance);
    d.evidence = offset_text(p.now) + ", already " + format_ns(*p.first_settled->offset_ns) +
                 " when first settled, no change in its history; the clocks claim ±" + format_ns(*claimed).substr(1) +
                 "; " + spans;
    return d;
  }
  // 6. Inversions, or an excess over the claim that grew since the pair first settled, without a
  // pattern the rules can name (yet).
  const bool grown_excess = offset_known && claimed && excess(p.now);
  if (p.negative_spans > 0 || grown_excess) {
    d.cause = Cause::undetermined;
    d.culprit_note = !p.two_sided ? "one-sided interval: traffic in one direction only"
                     : !claimed   ? "the clocks' error bounds are unknown"
                     : grown_excess || p.unexplained_negative_spans > 0
                         ? "beyond the clocks' claimed bounds, but no step, drift or standing offset seen (yet)"
                         : "no step, drift or excess over the bounds seen";
    d.evidence = offset_text(p.now) + "; " + spans;
    return d;
  }
  // 7. Path asymmetry: the interval is lopsided and its midpoint further from zero than the
  // clocks allow, while the interval still admits what the clocks claim.
  // The estimator calls a lopsided interval unsettled (its half-width is about half the slow
  // direction's delay, far beyond 3 × Δt_min), so the pair need only have been settled once in
  // its history: its warm-up is over, and the interval widened since.
  const bool interval_known =
      p.two_sided && !p.now.broken && p.now.offset_ns && p.now.bound_ns && (p.now.settled || p.history_settled);
  if (interval_known && claimed && p.now.forward_min_span_ns && p.now.reverse_min_span_ns &&
      *p.now.forward_min_span_ns > 0 && *p.now.reverse_min_span_ns > 0) {
    const double claim = claimed.value_or(0);
    const double lo = *p.now.offset_ns - *p.now.bound_ns, hi = *p.now.offset_ns + *p.now.bound_ns;
    const double big = std::max(*p.now.forward_min_span_ns, *p.now.reverse_min_span_ns);
    const double small = std::min(*p.now.forward_min_span_ns, *p.now.reverse_min_span_ns);
    const bool admits_claim = lo <= claim && hi >= -claim;
    // A floor still falling is an offset on the move (a drift about to invert the low direction's
    // spans looks lopsided for a moment); a slower path only raises its own direction's floor.
    if (admits_claim && !p.floor_fall && std::abs(*p.now.offset_ns) > claim && big >= config.asymmetry_ratio * small) {
      d.cause = Cause::path_asymmetry;
      d.amount = *p.now.forward_min_span_ns - *p.now.reverse_min_span_ns;
      d.tolerance = claim;
      d.confidence = clearance(std::abs(*p.now.offset_ns), claim);
      d.culprit_note = "the path, not a clock: the midpoint is biased by half the asymmetry";
      d.evidence = "minimum spans " + format_ns(*p.now.forward_min_span_ns) + " " + p.src + "→" + p.dst + ", " +
                   format_ns(*p.now.reverse_min_span_ns) + " back; " + offset_text(p.now) + ", the clocks claim ±" +
                   format_ns(claim).substr(1);
      return d;
    }
  }
  // 8. Not enough evidence to call the pair healthy.
  if (!p.has_estimate || !p.two_sided || !p.now.settled) {
    d.cause = Cause::undetermined;
    d.culprit_note = !p.has_estimate ? "no estimate in the window"
                     : !p.two_sided  ? "one-sided interval: traffic in one direction only"
                                     : "the interval has not settled";
    d.evidence = offset_text(p.now) + "; " + spans;
    return d;
  }
  // 9. None.
  d.cause = Cause::none;
  d.confidence = 1;
  d.evidence = offset_text(p.now) + "; " + spans;
  return d;
}
}  // namespace

PairDiagnosis diagnose_pair(const PairObservation& p, const HostClock* src, const HostClock* dst,
                            const Config& config) {
  PairDiagnosis d = diagnose_pair_rules(p, src, dst, config);
  // The evidence speaks of θ in this orientation, whichever way the pair is shown later.
  d.evidence = "θ(" + p.src + "→" + p.dst + "): " + d.evidence;
  if (p.floor_fall && d.moved_certainly && !d.evidence_names_floor)
    d.evidence += "; " + floor_fell_text(p, *p.floor_fall, "in") + " (its wander and the threshold allow " +
                  format_ns(p.floor_fall->allowed_ns).substr(1) + "): the offset moved";
  return d;
}

PairDiagnosis reversed(const PairDiagnosis& d) {
  PairDiagnosis r = d;
  std::swap(r.src, r.dst);
  if (r.amount) r.amount = -*r.amount;
  for (auto* m : {&r.step, &r.drift, &r.offset})
    if (*m) (*m)->value = -(*m)->value;
  return r;
}

const char* amount_unit(Cause c) { return c == Cause::clock_drift ? "ppm" : "seconds"; }

namespace {

std::string clock_line(const HostClock& c) {
  if (!c.readings)
    return c.error_bound_ns ? "declared bound ±" + format_ns(*c.error_bound_ns).substr(1) : "no clock readings";
  std::string s;
  if (c.ptp) {
    s = "ptp4l: port " + c.port_state.value_or("?") + ", grandmaster " +
        (c.gm_present ? (*c.gm_present ? "present" : "absent") : "unknown");
    if (c.ptp_offset_ns) s += ", offset " + format_ns(*c.ptp_offset_ns);
    s += "; ";
  }
  s += "clock " + (c.status.empty() ? std::string("unknown") : c.status);
  s += c.error_bound_ns ? ", bound ±" + format_ns(*c.error_bound_ns).substr(1) : ", bound unknown";
  return s;
}

std::vector<PairMeasure> measures_of(const std::vector<PairDiagnosis>& pairs,
                                     std::optional<Measure> PairDiagnosis::*m) {
  std::vector<PairMeasure> out;
  const bool drift = m == &PairDiagnosis::drift;
  for (const auto& p : pairs) {
    if (p.cause == Cause::capture_incomplete) continue;
    // A window that broke, or a floor that fell, with no change in the history: moved for certain,
    // so still for no host outside it, whatever slope the estimator shows or however wide it is (rule 1).
    const bool moved = drift && p.moved_certainly;
    if (p.*m)
      out.push_back({p.src, p.dst, (p.*m)->value, (p.*m)->tolerance, !drift || !p.moved_unmeasured, moved});
    else if (drift && p.moved_unmeasured)  // inverted or broken, no slope yet: consistent with any shift of its own
      out.push_back({p.src, p.dst, 0, std::numeric_limits<double>::infinity(), false, moved});
  }
  return out;
}

}  // namespace

DiagnosisReport combine(std::vector<PairDiagnosis> pairs, const std::vector<HostClock>& clocks, const Config& config) {
  DiagnosisReport r;
  std::sort(pairs.begin(), pairs.end(), [](const PairDiagnosis& a, const PairDiagnosis& b) {
    return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
  });
  // One triangulation per kind of shift, over every pair that measured it (faulty or not).
  std::map<Cause, Triangulation> by_cause;
  by_cause[Cause::clock_step] = triangulate(measures_of(pairs, &PairDiagnosis::step));
  // A slope's tolerance shrinks as its pair is watched longer: a pair among the others counts as
  // still only once it is at most the threshold (docs/diagnosis.md, "Culprit"). A step or an offset
  // does not grow with time: its tolerance now is what it will be.
  by_cause[Cause::clock_drift] =
      triangulate(measures_of(pairs, &PairDiagnosis::drift), config.drift_threshold_ppm, config.drift_threshold_ppm);
  by_cause[Cause::clock_source_disagrees] = triangulate(measures_of(pairs, &PairDiagnosis::offset));
  for (auto& p : pairs) {
    auto it = by_cause.find(p.cause);
    if (it == by_cause.end()) continue;
    const Triangulation& t = it->second;
    p.culprit_candidates.clear();
    if (t.culprit && (*t.culprit == p.src || *t.culprit == p.dst)) {
      p.culprit = t.culprit;
      p.culprit_note = t.note;
    } else {
      p.culprit.reset();
      p.culprit_note = t.culprit ? "the culprit of the other pairs, " + *t.culprit + ", is not in this pair" : t.note;
      // Several hosts fit: the pairs they are in say so (a pair of neither is not suspected).
      const auto in_pair = [&](const std::string& h) { return h == p.src || h == p.dst; };
      if (std::any_of(t.candidates.begin(), t.candidates.end(), in_pair)) p.culprit_candidates = t.candidates;
    }
  }
  // Hosts: every host of a pair or with clock readings.
  std::map<std::string, HostDiagnosis> hosts;
  for (const auto& c : clocks) hosts[c.host].clock = clock_line(c);
  for (const auto& p : pairs) {
    for (const auto* name : {&p.src, &p.dst}) {
      HostDiagnosis& h = hosts[*name];
      if (h.clock.empty()) h.clock = "no clock readings";
      if (!p.incident()) continue;
      h.pairs.push_back(p.src + "→" + p.dst);
      if (p.culprit && *p.culprit == *name) {
        if (!h.culprit || p.confidence > h.confidence) {
          h.cause = p.cause;
          h.confidence = p.confidence;
          const auto& t = by_cause.find(p.cause);
          h.amount = t != by_cause.end() && t->second.culprit ? t->second.amount : p.amount;
        }
        h.culprit = true;
      } else if (!h.culprit && h.cause == Cause::none && !p.culprit && p.cause != Cause::path_asymmetry) {
        h.cause = Cause::undetermined;  // in an incident nobody can be blamed for yet
      }
    }
    if (p.incident()) ++r.incidents;
  }
  for (auto& [name, h] : hosts) {
    h.host = name;
    r.hosts.push_back(std::move(h));
  }
  r.pairs = std::move(pairs);
  return r;
}

DiagnosisReport diagnose(const std::vector<PairObservation>& pairs, const std::vector<HostClock>& clocks,
                         const Config& config) {
  auto clock_of = [&](const std::string& host) -> const HostClock* {
    for (const auto& c : clocks)
      if (c.host == host) return &c;
    return nullptr;
  };
  std::vector<PairDiagnosis> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) out.push_back(diagnose_pair(p, clock_of(p.src), clock_of(p.dst), config));
  return combine(std::move(out), clocks, config);
}

}  // namespace skewscope::diagnose
