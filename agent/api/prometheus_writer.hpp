// Prometheus text format 0.0.4: one family at a time, HELP and TYPE first, label values escaped.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace skewscope {

class PrometheusWriter {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  explicit PrometheusWriter(std::string& out) : out_(out) {}

  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, Labels labels, double value);
  void sample(std::string_view name, double value) { sample(name, {}, value); }

 private:
  std::string& out_;
};

std::string escape_label_value(std::string_view v);
std::string format_sample_value(double v);

}  // namespace skewscope
