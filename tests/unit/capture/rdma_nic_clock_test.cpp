// NIC completion stamps -> CLOCK_MONOTONIC (capture/rdma_nic_clock): rate and offset from
// bracketed samples, error bounds, rejections, and the fallback of every stamp that cannot map.
#include "capture/rdma_nic_clock.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace skewscope::rdma;

namespace {

// A NIC at 156.25 MHz (0.15625 cycles per ns) whose count was `origin` at host time 0,
// running `ppm` fast against the host.
struct SimulatedNic {
  long double origin = 1e12L, ppm = 0;
  std::uint64_t at(std::int64_t host_ns) const {
    return static_cast<std::uint64_t>(origin + static_cast<long double>(host_ns) * 0.15625L * (1 + ppm * 1e-6L));
  }
  // A query_rt_values call: probe entry at t, the read `read_after` ns later, return at t + width.
  NicClockSample sample(std::int64_t t, std::int64_t width, std::int64_t read_after) const {
    return {at(t + read_after), t, t + width};
  }
};

skewscope_rdma_event recv(std::uint64_t probe_ns, std::uint8_t stamp, std::uint64_t nic_ts) {
  skewscope_rdma_event e{};
  e.kind = SKEWSCOPE_RDMA_RECV;
  e.ts_ns = probe_ns;
  e.nic_stamp = stamp;
  e.nic_ts = nic_ts;
  return e;
}

}  // namespace

TEST_CASE("nic clock: no mapping before two samples a baseline apart") {
  NicClock clock;
  const SimulatedNic nic;
  CHECK(clock.to_monotonic(5).error == NicMapError::no_samples);
  REQUIRE(clock.add(nic.sample(1'000'000'000, 2'000, 1'000)));
  CHECK(clock.to_monotonic(5).error == NicMapError::one_sample);
  REQUIRE(clock.add(nic.sample(1'000'500'000, 2'000, 1'000)));  // 0.5 ms later: too short to measure a rate
  CHECK(clock.to_monotonic(5).error == NicMapError::short_baseline);
  REQUIRE(clock.add(nic.sample(1'020'000'000, 2'000, 1'000)));
  auto m = clock.to_monotonic(nic.at(1'030'000'000));
  REQUIRE(m);
  // Each read was 1 us before its bracket's end, which is taken as its time: 1 us late, never
  // early (the cycle is 6.4 ns).
  CHECK(m->monotonic_ns - 1'030'000'000 >= -8);
  CHECK(m->monotonic_ns - 1'030'000'000 <= 1'000 + 8);
  CHECK(m->error_bound_ns >= 2'000);
}

TEST_CASE("nic clock: a drifting NIC is followed, within the bound the brackets give") {
  const SimulatedNic nic{3e11L, 250};  // 250 ppm fast
  NicClock clock;
  // Brackets 40 us wide, the read anywhere in them: the mapping must stay within its bound.
  const std::int64_t reads[] = {0, 40'000, 13'000, 31'000, 20'000, 5'000};
  std::int64_t t = 2'000'000'000;
  for (std::int64_t read : reads) {
    REQUIRE(clock.add(nic.sample(t, 40'000, read)));
    t += 50'000'000;
  }
  for (std::int64_t ahead : {0L, 1'000'000L, 50'000'000L}) {
    const std::int64_t truth = t + ahead;
    auto m = clock.to_monotonic(nic.at(truth));
    REQUIRE(m);
    CHECK(std::llabs(m->monotonic_ns - truth) <= m->error_bound_ns + 8);
    CHECK(m->error_bound_ns >= 40'000);  // at least the anchor's width
  }
}

TEST_CASE("nic clock: a read early in its bracket maps late by at most the width, never early") {
  const SimulatedNic nic;
  for (std::int64_t read : {0L, 10'000L, 29'000L, 30'000L}) {
    NicClock clock;
    REQUIRE(clock.add(nic.sample(1'000'000'000, 30'000, read)));
    REQUIRE(clock.add(nic.sample(1'200'000'000, 30'000, read)));
    auto m = clock.to_monotonic(nic.at(1'200'100'000));
    REQUIRE(m);
    CHECK(m->monotonic_ns - 1'200'100'000 >= -8);
    CHECK(m->monotonic_ns - 1'200'100'000 <= 30'000 - read + 8);
  }
}

TEST_CASE("nic clock: the offset comes from the narrowest recent bracket") {
  const SimulatedNic nic;
  NicClock clock;
  REQUIRE(clock.add(nic.sample(1'000'000'000, 200, 100)));
  REQUIRE(clock.add(nic.sample(1'100'000'000, 200, 100)));
  REQUIRE(clock.add(nic.sample(1'200'000'000, 400'000, 399'000)));  // a descheduled call: wide
  auto m = clock.to_monotonic(nic.at(1'200'500'000));
  REQUIRE(m);
  CHECK(std::llabs(m->monotonic_ns - 1'200'500'000) < 5'000);
  CHECK(m->error_bound_ns < 100'000);
}

TEST_CASE("nic clock: inverted or overlapping brackets are refused; a clock reset restarts the history") {
  const SimulatedNic nic;
  NicClock clock;
  CHECK_FALSE(clock.add({100, 2'000, 1'000}));
  REQUIRE(clock.add(nic.sample(1'000'000'000, 1'000, 500)));
  CHECK_FALSE(clock.add(nic.sample(1'000'000'500, 1'000, 500)));  // overlaps the previous call
  CHECK(clock.samples() == 1);
  REQUIRE(clock.add(nic.sample(1'010'000'000, 1'000, 500)));
  CHECK_FALSE(clock.add({5, 1'020'000'000, 1'020'001'000}));  // went backwards: reset
  CHECK(clock.samples() == 1);
  CHECK(clock.to_monotonic(5).error == NicMapError::one_sample);
}

TEST_CASE("stamps: a raw stamp maps through the clock; without one it keeps the probe's time") {
  const SimulatedNic nic;
  NicClock clock;
  REQUIRE(clock.add(nic.sample(1'000'000'000, 1'000, 500)));
  REQUIRE(clock.add(nic.sample(1'100'000'000, 1'000, 500)));
  auto e = recv(1'150'000'000, SKEWSCOPE_RDMA_NIC_RAW, nic.at(1'149'990'000));
  CHECK(resolve_stamp(e, &clock, 0) == StampOutcome::nic_completion);
  CHECK(e.ts_source == SKEWSCOPE_RDMA_TS_NIC_COMPLETION);
  CHECK(static_cast<std::int64_t>(e.ts_ns) - 1'149'990'000 >= -8);
  CHECK(static_cast<std::int64_t>(e.ts_ns) - 1'149'990'000 <= 500 + 8);

  auto lonely = recv(1'150'000'000, SKEWSCOPE_RDMA_NIC_RAW, nic.at(1'149'990'000));
  CHECK(resolve_stamp(lonely, nullptr, 0) == StampOutcome::no_clock);
  CHECK(lonely.ts_ns == 1'150'000'000);
  CHECK(lonely.ts_source == SKEWSCOPE_RDMA_TS_PROBE);
}

TEST_CASE("stamps: a stamp after its poll, or ages before it, is not believed") {
  const SimulatedNic nic;
  NicClock clock;
  REQUIRE(clock.add(nic.sample(1'000'000'000, 1'000, 500)));
  REQUIRE(clock.add(nic.sample(1'100'000'000, 1'000, 500)));
  auto late = recv(1'150'000'000, SKEWSCOPE_RDMA_NIC_RAW, nic.at(1'150'100'000));  // 100 us after the poll
  CHECK(resolve_stamp(late, &clock, 0) == StampOutcome::implausible);
  CHECK(late.ts_ns == 1'150'000'000);
  auto old = recv(20'150'000'000, SKEWSCOPE_RDMA_NIC_RAW, nic.at(1'150'000'000));  // 19 s before the poll
  CHECK(resolve_stamp(old, &clock, 0) == StampOutcome::implausible);
  CHECK(old.ts_source == SKEWSCOPE_RDMA_TS_PROBE);
}

TEST_CASE("stamps: a wall-clock stamp maps with the host's realtime - monotonic; 37 s off is refused") {
  const std::int64_t offset = 1'700'000'000'000'000'000;  // realtime - monotonic
  auto e = recv(5'000'000'000, SKEWSCOPE_RDMA_NIC_WALLCLOCK, offset + 4'999'980'000);
  CHECK(resolve_stamp(e, nullptr, offset) == StampOutcome::nic_wallclock);
  CHECK(e.ts_ns == 4'999'980'000);
  CHECK(e.ts_source == SKEWSCOPE_RDMA_TS_NIC_WALLCLOCK);
  auto tai = recv(5'000'000'000, SKEWSCOPE_RDMA_NIC_WALLCLOCK, offset + 4'999'980'000 + 37'000'000'000);
  CHECK(resolve_stamp(tai, nullptr, offset) == StampOutcome::implausible);
  CHECK(tai.ts_ns == 5'000'000'000);
}

TEST_CASE("stamps: sends, plain receives and unread stamps keep the probe's time") {
  auto send = recv(7, SKEWSCOPE_RDMA_NIC_NONE, 0);
  send.kind = SKEWSCOPE_RDMA_SEND;
  CHECK(resolve_stamp(send, nullptr, 0) == StampOutcome::probe);
  auto plain = recv(7, SKEWSCOPE_RDMA_NIC_NONE, 0);
  CHECK(resolve_stamp(plain, nullptr, 0) == StampOutcome::probe);
  auto unread = recv(7, SKEWSCOPE_RDMA_NIC_UNREAD, 0);
  CHECK(resolve_stamp(unread, nullptr, 0) == StampOutcome::not_read);
  CHECK(unread.ts_ns == 7);
  CHECK(unread.ts_source == SKEWSCOPE_RDMA_TS_PROBE);
}
