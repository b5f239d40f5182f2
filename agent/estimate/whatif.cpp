#include "estimate/whatif.hpp"

#include <cmath>
#include <cstdio>

#include "domains/duration.hpp"

namespace skewscope::estimate {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string percent(double v) {
  char buf[32];
  if (v > 0 && v < 0.0001)
    std::snprintf(buf, sizeof buf, "%.1e%%", v * 100);
  else
    std::snprintf(buf, sizeof buf, "%.2f%%", v * 100);
  return buf;
}

}  // namespace

Result<ErrorModel> parse_error_model(std::string_view text) {
  const std::string original(text);
  text = trim(text);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return Result<ErrorModel>::fail("clock error '" + original +
                                    "' needs KIND:SCALE, e.g. gaussian:1ms or laplace:250us");
  const std::string_view kind = text.substr(0, colon);
  ErrorModel m;
  if (kind == "gaussian" || kind == "normal")
    m.kind = ErrorKind::gaussian;
  else if (kind == "laplace")
    m.kind = ErrorKind::laplace;
  else
    return Result<ErrorModel>::fail("unknown clock error distribution '" + std::string(kind) +
                                    "' (expected gaussian or laplace)");
  auto scale = parse_duration_ns(text.substr(colon + 1));
  if (!scale) return Result<ErrorModel>::fail("clock error '" + original + "': " + scale.error);
  if (*scale < 0) return Result<ErrorModel>::fail("clock error '" + original + "': the scale must not be negative");
  m.scale_ns = static_cast<double>(*scale);
  m.spec = std::string(text);
  return Result<ErrorModel>::ok(std::move(m));
}

Result<std::vector<ErrorModel>> parse_error_models(std::string_view text) {
  std::vector<ErrorModel> out;
  while (true) {
    const auto sep = text.find_first_of("|,");
    auto one = parse_error_model(text.substr(0, sep));
    if (!one) return Result<std::vector<ErrorModel>>::fail(one.error);
    out.push_back(*one);
    if (sep == std::string_view::npos) break;
    text.remove_prefix(sep + 1);
  }
  return Result<std::vector<ErrorModel>>::ok(std::move(out));
}

double inversion_probability(const ErrorModel& model, double s) {
  if (model.scale_ns <= 0) return s < 0 ? 1.0 : 0.0;  // a perfect clock keeps the span as it is
  if (model.kind == ErrorKind::gaussian) return 0.5 * std::erfc(s / (2 * model.scale_ns));
  const double x = std::fabs(s) / model.scale_ns;
  const double tail = 0.5 * (1 + x / 2) * std::exp(-x);
  return s >= 0 ? tail : 1 - tail;
}

WhatIfTable what_if(const Estimator& estimator, const std::vector<ErrorModel>& models, std::int64_t now_ns,
                    WhatIfOptions options) {
  WhatIfTable table;
  table.models = models;
  const std::size_t m = models.size();
  std::vector<double> inverted(m, 0.0);
  double all_messages = 0;
  for (const auto& [src, dst] : estimator.directed_pairs(now_ns)) {
    WhatIfRow row;
    row.src = src;
    row.dst = dst;
    row.rate.assign(m, 0.0);
    row.violated.assign(m, 0.0);
    double shift = 0;
    const auto e = estimator.evaluate(src, dst, now_ns);
    if (e) {
      row.window_spans = e->forward_spans;
      if (e->forward_spans) row.observed_negative_ratio = static_cast<double>(e->forward_negative) / e->forward_spans;
    }
    // Never a one-sided or unsettled midpoint: such a pair keeps its spans as observed.
    const ShownOffset shown = shown_offset(e ? &*e : nullptr);
    row.offset_missing = shown.missing;
    row.missing_bound = shown.missing_bound;
    if (options.remove_estimated_offset && shown.offset_ns) {
      shift = *shown.offset_ns;
      row.offset_removed = true;
    }

    const auto samples = estimator.samples(src, dst, now_ns);
    row.samples = samples.size();
    double weight = 0;
    std::vector<double> log_clean(m, 0.0);  // log P(no inversion among the window's messages)
    for (const auto& ws : samples) {
      weight += ws.weight;
      for (std::size_t k = 0; k < m; ++k) {
        const double p = inversion_probability(models[k], static_cast<double>(ws.span_ns) - shift);
        row.rate[k] += ws.weight * p;
        log_clean[k] += ws.weight * std::log1p(-p);  // -inf when p = 1: certain violation
      }
    }
    if (weight > 0)
      for (std::size_t k = 0; k < m; ++k) {
        inverted[k] += row.rate[k];
        row.rate[k] /= weight;
        row.violated[k] = -std::expm1(log_clean[k]);
      }
    all_messages += weight;
    table.rows.push_back(std::move(row));
  }
  table.message_share.assign(m, 0.0);
  table.pairs_violated_share.assign(m, 0.0);
  for (std::size_t k = 0; k < m; ++k) {
    if (all_messages > 0) table.message_share[k] = inverted[k] / all_messages;
    double v = 0;
    for (const auto& r : table.rows) v += r.violated[k];
    if (!table.rows.empty()) table.pairs_violated_share[k] = v / static_cast<double>(table.rows.size());
  }
  return table;
}

std::string render_what_if(const WhatIfTable& table, const std::function<std::string(DomainId)>& name) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head{"SRC", "DST", "SPANS", "OBSERVED"};
  for (const auto& m : table.models) head.push_back(m.spec);
  cells.push_back(head);
  for (const auto& r : table.rows) {
    std::vector<std::string> line{name(r.src), name(r.dst), std::to_string(r.window_spans),
                                  percent(r.observed_negative_ratio)};
    for (double v : r.rate) line.push_back(percent(v));
    cells.push_back(std::move(line));
  }
  std::vector<std::string> msg{"all", "", "", ""}, viol{"pairs violated", "", "", ""};
  for (double v : table.message_share) msg.push_back(percent(v));
  for (double v : table.pairs_violated_share) viol.push_back(percent(v));
  cells.push_back(msg);
  cells.push_back(viol);

  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  std::string out;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    if (r + 2 == cells.size()) out += "\n";  // headlines apart from the per-pair rows
    const auto& line = cells[r];
    for (std::size_t i = 0; i < line.size(); ++i) {
      std::string cell = line[i];
      const bool last = i + 1 == line.size();
      if (i < 2 || (r + 2 >= cells.size() && i < 4))
        cell.resize(width[i], ' ');  // names left-aligned
      else
        cell.insert(0, width[i] - cell.size(), ' ');
      out += cell;
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  bool first_note = true;
  for (const auto& r : table.rows) {
    if (r.offset_missing == OffsetMissing::none) continue;
    if (first_note) out += "\n";
    first_note = false;
    std::string why = offset_missing_name(r.offset_missing);
    if (r.missing_bound == MissingBound::lower) why += ", no " + name(r.dst) + " -> " + name(r.src) + " traffic";
    if (r.missing_bound == MissingBound::upper) why += ", no " + name(r.src) + " -> " + name(r.dst) + " traffic";
    out += "note: " + name(r.src) + " -> " + name(r.dst) + " has no offset (" + why +
           "): its spans are taken as observed, with whatever offset the clocks have now\n";
  }
  return out;
}

}  // namespace skewscope::estimate
