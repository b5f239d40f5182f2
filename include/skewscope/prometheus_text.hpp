// Prometheus text format 0.0.4, the one writer of every exposition (api/'s families, clocks/'s):
// one family at a time, HELP and TYPE first, label values escaped. Here rather
// than in api/ so that clocks/, a stage before api/, renders its families with it too.
#pragma once

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace skewscope {

inline std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// Whole numbers (counters, states) in plain digits; any other value with 15 significant digits,
// as many as a double always carries: a clock offset keeps its nanoseconds beside its seconds
// (-37.000000123), and the last bits of arithmetic (1000 * 1e-9) print as the number meant (1e-06).
inline std::string format_sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.15g", v);
  }
  return buf;
}

class PrometheusWriter {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  explicit PrometheusWriter(std::string& out) : out_(out) {}

  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }

  void sample(std::string_view name, Labels labels, double value) {
    out_.append(name);
    if (labels.size()) {
      out_ += '{';
      bool first = true;
      for (const auto& [key, val] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_.append(key).append("=\"").append(escape_label_value(val)).append("\"");
      }
      out_ += '}';
    }
    out_.append(" ").append(format_sample_value(value)).append("\n");
  }
  void sample(std::string_view name, double value) { sample(name, {}, value); }

 private:
  std::string& out_;
};

}  // namespace skewscope
