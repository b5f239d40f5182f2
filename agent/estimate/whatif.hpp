// What-if: the inversion rate each directed pair would have if every domain's clock carried an
// independent random error, computed from the window's own span distribution.
//
// For a message with span s and clock errors e_src, e_dst, the observed span becomes
// s + (e_dst − e_src), and it is an inversion when that is negative. Averaging the exact
// probability over the sampled spans gives the rate with no Monte-Carlo noise:
//   gaussian(σ) per clock → difference ~ N(0, 2σ²):          P = Φ(−s / (σ√2)) = ½ erfc(s / 2σ)
//   laplace(b) per clock  → difference has density (1 + |x|/b) e^(−|x|/b) / 4b, so for s ≥ 0
//                           P = ½ (1 + s/2b) e^(−s/b), and 1 − that at |s| for s < 0.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "estimate/estimator.hpp"
#include "skewscope/result.hpp"

namespace skewscope::estimate {

enum class ErrorKind { gaussian, laplace };

struct ErrorModel {
  ErrorKind kind = ErrorKind::gaussian;
  double scale_ns = 0;  // σ for gaussian, b (the Laplace scale; std dev b√2) for laplace, per clock
  std::string spec;     // as written, for table headers
};

// "gaussian:1ms", "laplace:250us" ("normal" is accepted for gaussian). Several models separated by
// '|' or ',' become several columns. The scale must not be negative; 0 means a perfect clock.
Result<ErrorModel> parse_error_model(std::string_view text);
Result<std::vector<ErrorModel>> parse_error_models(std::string_view text);

// Probability that one message with span s is inverted under the model.
double inversion_probability(const ErrorModel& model, double span_ns);

struct WhatIfRow {
  DomainId src = 0, dst = 0;
  std::uint64_t window_spans = 0;
  std::size_t samples = 0;
  double observed_negative_ratio = 0;  // in the window, as counted (not sampled)
  std::vector<double> rate;            // per model: expected share of this pair's messages inverted
  std::vector<double> violated;        // per model: probability of ≥ 1 inversion in a window of this traffic
  // Why the pair has no offset (shown_offset's rule), or none. Without one the spans are used as
  // observed: whatever the present offset is, it stays in them, unmeasured and not removed.
  OffsetMissing offset_missing = OffsetMissing::no_estimate;
  MissingBound missing_bound = MissingBound::none;
  bool offset_removed = false;  // remove_estimated_offset applied a shown offset to this row
};

struct WhatIfTable {
  std::vector<ErrorModel> models;
  std::vector<WhatIfRow> rows;
  // Headlines per model. message_share: expected share of all (send, recv) event pairs that the
  // timestamps would misorder, weighted by traffic — the published "share of directed pairs
  // misordered". pairs_violated_share: expected share of directed domain pairs whose window would
  // hold an inversion, i.e. that health would report violated.
  std::vector<double> message_share;
  std::vector<double> pairs_violated_share;
};

struct WhatIfOptions {
  // Subtract the current midpoint estimate from each span first: "if the clocks were first
  // aligned to the estimate, then got this error". Off by default, as the midpoint carries the
  // asymmetry bias; pairs without a shown (two-sided, settled) offset are then left as observed.
  bool remove_estimated_offset = false;
};

WhatIfTable what_if(const Estimator& estimator, const std::vector<ErrorModel>& models, std::int64_t now_ns,
                    WhatIfOptions options = {});

// Plain-text table for the CLI; name maps a domain id to its name. Rows without an offset get a
// note below the table saying what was assumed for them.
std::string render_what_if(const WhatIfTable& table, const std::function<std::string(DomainId)>& name);

}  // namespace skewscope::estimate
