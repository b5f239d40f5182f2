#include "domains/duration.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace skewscope {
namespace {

struct Unit {
  std::string_view suffix;
  double ns;
};
// Longest suffixes first so "ms" is not read as "m" + "s".
constexpr std::array<Unit, 7> kUnits{
    {{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}}};

}  // namespace

Result<std::int64_t> parse_duration_ns(std::string_view text) {
  const std::string original(text);
  if (text.empty()) return Result<std::int64_t>::fail("empty duration");
  double sign = 1;
  if (text.front() == '+' || text.front() == '-') {
    sign = text.front() == '-' ? -1 : 1;
    text.remove_prefix(1);
  }
  // A bare zero needs no unit: it is the same in all of them (Go's ParseDuration agrees).
  if (text == "0") return Result<std::int64_t>::ok(0);
  for (const auto& unit : kUnits) {
    if (text.size() <= unit.suffix.size() || !text.ends_with(unit.suffix)) continue;
    std::string_view number = text.substr(0, text.size() - unit.suffix.size());
    // "5ms" also ends with "s": only accept when the number part is purely numeric.
    double value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size()) continue;
    if (!std::isfinite(value) || value < 0) break;
    double ns = sign * value * unit.ns;
    if (std::fabs(ns) > 9.2e18) return Result<std::int64_t>::fail("duration '" + original + "' is out of range");
    return Result<std::int64_t>::ok(static_cast<std::int64_t>(std::llround(ns)));
  }
  return Result<std::int64_t>::fail("malformed duration '" + original +
                                    "' (expected a number and a unit: ns, us, ms, s, m, h; e.g. 5ms, -250us)");
}

std::string format_duration_ns(std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  std::uint64_t mag = ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  struct Step {
    std::uint64_t ns;
    const char* suffix;
  };
  for (Step step : {Step{1000000000, "s"}, Step{1000000, "ms"}, Step{1000, "us"}}) {
    if (mag >= step.ns) {
      if (mag % step.ns == 0) return sign + std::to_string(mag / step.ns) + step.suffix;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.3f%s", sign, static_cast<double>(mag) / step.ns, step.suffix);
      return buf;
    }
  }
  return sign + std::to_string(mag) + "ns";
}

}  // namespace skewscope
