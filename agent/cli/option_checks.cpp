#include "cli/option_checks.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace skewscope {
namespace {

template <class T>
std::string range_text(T min, T max) {
  std::ostringstream out;
  out << min << " to " << max;
  return out.str();
}

}  // namespace

Status check_count(std::string_view text, std::uint64_t min, std::uint64_t max) {
  const std::string expected = "must be a whole number from " + range_text(min, max);
  std::uint64_t value = 0;
  // from_chars for unsigned refuses a sign, unlike strtoull (which wraps "-1" to the maximum).
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return Status::fail("'" + std::string(text) + "' " + expected);
  if (value < min || value > max) return Status::fail(std::string(text) + " is out of range: " + expected);
  return Status::ok();
}

Status check_finite(std::string_view text, double min, double max) {
  const std::string expected = "must be a number from " + range_text(min, max);
  std::string_view number = text;
  if (!number.empty() && number.front() == '+') number.remove_prefix(1);  // "+0.5" as CLI11 takes it
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value))
    return Status::fail("'" + std::string(text) + "' " + expected);
  if (value < min || value > max) return Status::fail(std::string(text) + " is out of range: " + expected);
  return Status::ok();
}

}  // namespace skewscope
