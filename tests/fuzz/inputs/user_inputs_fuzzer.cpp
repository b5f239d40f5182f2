// libFuzzer target for the parsers of what users type: durations, --domain, --simulate-clock
// (also what `skewscope simulate` sends over the control socket) and what-if error models.
// Beyond "no crash, no undefined behaviour", one contract: an accepted clock simulation can be
// applied. Its error, at any moment within a century of boot, added to any wall-clock timestamp
// up to now + a century, never overflows a signed 64-bit nanosecond count.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "domains/domain_spec.hpp"
#include "domains/duration.hpp"
#include "domains/simulated_clocks.hpp"
#include "estimate/whatif.hpp"

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kCentury = 100LL * 365 * 24 * 3600 * kSecond;
constexpr std::int64_t kLatestWallClock = 1'800'000'000LL * kSecond + kCentury;  // ~2027 + 100 years

void check_simulation(const skewscope::ClockSimulation& sim) {
  skewscope::SimulatedClocks clocks;
  clocks.set(0, sim.offset_ns, sim.drift_ppm, 0);
  for (std::int64_t mono : {std::int64_t{0}, kSecond, 3600 * kSecond, kCentury}) {
    const std::int64_t error = clocks.error_ns(0, mono);
    for (std::int64_t wall : {std::int64_t{0}, kLatestWallClock}) {
      std::int64_t shifted = 0;
      if (__builtin_add_overflow(wall, error, &shifted)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = skewscope::parse_duration_ns(text)) (void)skewscope::format_duration_ns(*d);
  if (auto sim = skewscope::parse_clock_simulation(text)) check_simulation(*sim);
  (void)skewscope::parse_domain_spec(text);
  if (auto models = skewscope::estimate::parse_error_models(text))
    for (const auto& m : *models)
      for (double span : {-1e9, 0.0, 1e3, 1e9}) {
        const double p = skewscope::estimate::inversion_probability(m, span);
        if (!(p >= 0 && p <= 1)) std::abort();  // a probability, and not NaN
      }
  return 0;
}
