// PHC -> system mapping, on readings shaped like the PTP_SYS_OFFSET_EXTENDED output of a NIC
// whose PHC keeps TAI (37 s ahead of CLOCK_REALTIME) and runs 12 ppm fast. This machine has no
// PHC: the readings are written down from that model, with the brackets (2-3 µs, one preempted
// read of 40 µs) such reads show, so that the true system time of every stamp is known.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "clocks/phc_mapping.hpp"

using namespace skewscope::clocks;

namespace {

constexpr std::int64_t kSys0 = 1'790'000'000'000'000'000;  // realtime of the first reading (ns)
constexpr std::int64_t kTaiOffset = 37'000'000'000;
constexpr double kRatePpm = 12;

// The model: PHC time at true system time sys.
std::int64_t phc_at(std::int64_t sys) {
  return sys + kTaiOffset + static_cast<std::int64_t>(static_cast<double>(sys - kSys0) * kRatePpm * 1e-6);
}

// One EXTENDED-style triple read at true time sys, the system reads bracketing it asymmetrically.
PhcSample triple(std::int64_t sys, std::int64_t before, std::int64_t after) {
  return {sys - before, phc_at(sys), sys + after};
}

}  // namespace

TEST_CASE("the best triple of a reading gives system - PHC and half its bracket") {
  std::vector<PhcSample> readings = {triple(kSys0, 20'000, 20'000), triple(kSys0 + 50'000, 1'200, 1'300),
                                     triple(kSys0 + 90'000, 1'500, 1'500)};
  auto best = best_sample(readings);
  REQUIRE(best);
  CHECK(best->interval_ns == 2'500);
  auto point = reading_from(readings[1]);
  REQUIRE(point);
  CHECK(point->half_bracket_ns == 1'250);
  // The midpoint of an asymmetric bracket is 50 ns off the true read time: within the half bracket.
  CHECK(std::llabs(point->offset_ns - (kSys0 + 50'000 - phc_at(kSys0 + 50'000))) <= point->half_bracket_ns);
}

TEST_CASE("a stamp between two readings maps within the readings' uncertainty") {
  PhcMapping m;
  for (int i = 0; i < 5; ++i) {
    auto p = reading_from(triple(kSys0 + i * 1'000'000'000LL, 1'100 + 100 * i, 1'400));
    REQUIRE(p);
    REQUIRE(m.add(*p));
  }
  for (std::int64_t sys : {kSys0 + 250'000'000LL, kSys0 + 1'500'000'000LL, kSys0 + 3'999'000'000LL}) {
    auto mapped = m.map(phc_at(sys));
    REQUIRE(mapped);
    CHECK(std::llabs(mapped->system_ns - sys) <= mapped->uncertainty_ns);
    CHECK(mapped->uncertainty_ns < 3'000);  // the brackets, plus 1 ppm of at most half a second
  }
}

TEST_CASE("extrapolation past the newest reading grows the bound with the distance") {
  PhcMapping m;
  for (int i = 0; i < 3; ++i) m.add(*reading_from(triple(kSys0 + i * 1'000'000'000LL, 1'000, 1'000)));
  auto near = m.map(phc_at(kSys0 + 2'100'000'000LL));
  auto far = m.map(phc_at(kSys0 + 4'000'000'000LL));
  REQUIRE(near);
  REQUIRE(far);
  CHECK(far->uncertainty_ns > near->uncertainty_ns);
  CHECK(std::llabs(far->system_ns - (kSys0 + 4'000'000'000LL)) <= far->uncertainty_ns);
  // Beyond the extrapolation limit there is no mapping at all, not a guess.
  CHECK_FALSE(m.map(phc_at(kSys0 + 8'000'000'000LL)));
}

TEST_CASE("with one reading the rate is unknown: the bound assumes the largest rate difference") {
  PhcMapping m;
  m.add(*reading_from(triple(kSys0, 1'000, 1'000)));
  auto mapped = m.map(phc_at(kSys0 + 1'000'000'000LL));
  REQUIRE(mapped);
  CHECK(mapped->uncertainty_ns >= 500'000);  // 500 ppm of a second
  CHECK(std::llabs(mapped->system_ns - (kSys0 + 1'000'000'000LL)) <= mapped->uncertainty_ns);
}

TEST_CASE("a stepped PHC starts the mapping over; readings out of order are refused") {
  PhcMapping m;
  m.add(*reading_from(triple(kSys0, 1'000, 1'000)));
  m.add(*reading_from(triple(kSys0 + 1'000'000'000LL, 1'000, 1'000)));
  CHECK_FALSE(m.add(*reading_from(triple(kSys0 + 500'000'000LL, 1'000, 1'000))));
  PhcSample stepped = triple(kSys0 + 2'000'000'000LL, 1'000, 1'000);
  stepped.phc_ns += 5'000'000;  // ptp4l stepped the PHC by 5 ms
  REQUIRE(m.add(*reading_from(stepped)));
  CHECK(m.restarts() == 1);
  CHECK(m.size() == 1);
  CHECK_FALSE(m.map(0));
}

TEST_CASE("a reading whose bracket runs backwards is not a reading") {
  PhcSample backwards{kSys0 + 10, phc_at(kSys0), kSys0};
  CHECK_FALSE(reading_from(backwards));
}
