#include <doctest/doctest.h>
#include <cstdlib>

#include "capture/clock_mapping.hpp"
#include "capture/half_decode.hpp"
#include "capture/half_ring_size.hpp"
#include "capture/send_slots.hpp"
#include "synthetic_halves.hpp"

using namespace skewscope;

TEST_CASE("a send and its receive decode to the same directed flow key") {
  skewscope::test::SyntheticStream s({1, 40000, 1}, {2, 5555, 2}, 10);
  auto send = decode_half(s.write(10, 5));
  auto recv = decode_half(s.read(10, 6));
  REQUIRE(send.value);
  REQUIRE(recv.value);
  CHECK(send.value->flow == recv.value->flow);
  CHECK(send.value->flow.src_port == 40000);
  CHECK(send.value->flow.dst_port == 5555);
  CHECK(send.value->kind == HalfKind::send);
  CHECK(recv.value->kind == HalfKind::recv);
  CHECK(FlowKeyHash{}(send.value->flow) == FlowKeyHash{}(recv.value->flow));
}

TEST_CASE("monotonic to realtime uses the mapping valid at capture time") {
  MonotonicToRealtime m;
  CHECK(m.to_realtime(123) == 123);  // no sample yet: unchanged
  m.add({1000, 1'000'000});
  m.add({2000, 1'001'000});  // same offset: the same segment
  CHECK(m.size() == 1);
  m.add({3000, 2'000'000});  // the clock was stepped
  CHECK(m.size() == 2);
  CHECK(m.to_realtime(1500) == 1'000'500);
  CHECK(m.to_realtime(2000) == 1'001'000);
  CHECK(m.to_realtime(2999) == 1'999'001);  // between the readings around the step: interpolated
  CHECK(m.to_realtime(3001) == 2'000'001);
  CHECK(m.to_realtime(10) == 999'010);  // older than every sample: the oldest mapping
  m.sample_now();
  CHECK(m.size() >= 2);
}

TEST_CASE("readings bound the offset: noisy ones neither shift nor widen it, and two mappings agree") {
  constexpr std::int64_t kOffset = 1'700'000'000'000'000'000;  // REALTIME - MONOTONIC, the truth
  // Readings of one true offset, each REALTIME read somewhere between its MONOTONIC reads: the
  // reported midpoint is off by `skew`, the uncertainty says by at most how much.
  auto reading = [&](std::int64_t mono, std::int64_t skew, std::int64_t uncertainty) {
    return MonotonicToRealtime::Sample{mono + skew, mono + kOffset, uncertainty};
  };
  MonotonicToRealtime quiet, noisy;
  quiet.add(reading(1'000'000, 20, 25));
  noisy.add(reading(1'000'500, -9'000, 10'000));                         // preempted between its reads: 9 us off
  CHECK(noisy.to_realtime(2'000'000) - (2'000'000 + kOffset) == 9'000);  // one wide reading: its middle
  for (std::int64_t t = 2'000'000; t < 50'000'000; t += 1'000'000) {
    quiet.add(reading(t, (t / 1'000'000 % 7) * 5 - 15, 25));
    // Every fourth reading of the noisy mapping was preempted by up to 40 us; the others are tight.
    noisy.add(reading(t + 300, (t / 1'000'000) % 4 == 0 ? 39'000 : 3, (t / 1'000'000) % 4 == 0 ? 40'000 : 25));
  }
  CHECK(quiet.size() == 1);
  CHECK(noisy.size() == 1);  // a noisy reading is not a step
  CHECK(quiet.stats().steps == 0);
  CHECK(quiet.stats().readings == 49);
  for (std::int64_t t : {3'000'000, 30'000'000, 60'000'000}) {
    const std::int64_t truth = t + kOffset;
    CHECK(std::abs(quiet.to_realtime(t) - truth) <= 25);
    CHECK(std::abs(noisy.to_realtime(t) - truth) <= 25);  // the tight readings set it
    CHECK(std::abs(quiet.to_realtime(t) - noisy.to_realtime(t)) <= 50);
  }
  CHECK(noisy.stats().uncertainty_ns <= 25);
  CHECK(quiet.covers(1'000'020));  // from its first reading on
  CHECK_FALSE(quiet.covers(1'000'019));
}

TEST_CASE("a step opens a segment; between the readings around it the offset is interpolated") {
  MonotonicToRealtime m;
  m.add({1'000'000, 5'000'000, 50});
  m.add({2'000'000, 6'000'000, 50});
  m.add({3'000'000, 7'000'000 + 300, 50});  // 300 ns: within the threshold, followed, not a step
  CHECK(m.size() == 1);
  CHECK(m.to_realtime(3'500'000) == 7'500'300);
  m.add({4'000'000, 8'000'000 + 250'000, 50});  // stepped forward by 250 us
  CHECK(m.size() == 2);
  CHECK(m.stats().steps == 1);
  CHECK(m.to_realtime(3'000'000) == 7'000'300);  // the old segment's last reading: its offset
  // Nine tenths of the way from it to the step's reading: nine tenths of the 249.7 us moved.
  CHECK(m.to_realtime(3'900'000) == 7'900'300 + 224'730);
  CHECK(m.to_realtime(4'100'000) == 8'350'000);
  m.add({3'500'000, 0, 0});  // older than the newest reading: ignored
  CHECK(m.stats().readings == 4);
  MonotonicToRealtime few(MonotonicToRealtime::Keep{1000, 2});
  for (int i = 0; i < 4; ++i) few.add({i * 1'000'000, i * 1'000'000 + i * 10'000'000, 0});
  CHECK(few.size() == 2);  // the oldest steps forgotten; older events take the oldest kept
  CHECK(few.to_realtime(0) == 20'000'000);
  CHECK(few.stats().steps == 3);
}

TEST_CASE("two mappings sampling at different moments follow a clock moved by many small steps") {
  // A catch-up: REALTIME stepped by 5 us every ms (5 000 ppm). Two agents read the clocks every
  // 5 ms, 2.5 ms apart; a half captured anywhere is placed within about one step by both, so
  // that a 10 us span between them keeps its sign.
  constexpr std::int64_t kMs = 1'000'000;
  auto offset_at = [](std::int64_t t) { return 1'000'000'000 + (t / kMs) * 5'000; };
  MonotonicToRealtime a, b;
  for (std::int64_t t = 0; t <= 200 * kMs; t += 5 * kMs) {
    a.add({t + 1, t + 1 + offset_at(t + 1), 20});
    b.add({t + 2'500'000, t + 2'500'000 + offset_at(t + 2'500'000), 20});
  }
  CHECK(a.stats().steps == 40);
  std::int64_t worst = 0;
  for (std::int64_t t = 10 * kMs; t < 195 * kMs; t += 37'000) {
    const std::int64_t truth = t + offset_at(t);
    worst = std::max({worst, std::abs(a.to_realtime(t) - truth), std::abs(b.to_realtime(t) - truth)});
  }
  CHECK(worst <= 5'100);
}

TEST_CASE("the half rings share 8 MiB out per CPU, a power of 2 and at least 1 MiB each") {
  CHECK(half_ring_bytes_per_cpu(0) == 8u << 20);  // a count of 0 is treated as 1
  CHECK(half_ring_bytes_per_cpu(1) == 8u << 20);
  CHECK(half_ring_bytes_per_cpu(2) == 4u << 20);
  CHECK(half_ring_bytes_per_cpu(3) == 4u << 20);  // 2.67 MiB rounded up to a power of 2
  CHECK(half_ring_bytes_per_cpu(8) == 1u << 20);
  CHECK(half_ring_bytes_per_cpu(64) == 1u << 20);  // the floor: 64 MiB in all on 64 CPUs
}

TEST_CASE("the half reader is woken every power-of-2 count of halves that fits a quarter ring") {
  // 4 MiB ring, 80 B records + 8 B header: 11 915 fit in a quarter, so every 8192nd wakes.
  CHECK(half_ring_wakeup_mask(4u << 20, 80) == 8191);
  CHECK(half_ring_wakeup_mask(1u << 20, 80) == 2047);   // 2978 fit
  CHECK(half_ring_wakeup_mask(1u << 20, 2040) == 127);  // 128 x 2048 B is exactly a quarter
  CHECK(half_ring_wakeup_mask(64, 80) == 0);            // none fits: wake on every half
  CHECK((half_ring_wakeup_mask(4u << 20, 80) + 1) * 88 <= (4u << 20) / 4);
}

TEST_CASE("the send table's size: the default, a power of two from the test knob, or an error") {
  CHECK(*send_slots_from(nullptr) == kSendSlotsDefault);
  CHECK(*send_slots_from("") == kSendSlotsDefault);
  CHECK(*send_slots_from("1") == 1);
  CHECK(*send_slots_from("4096") == 4096);
  CHECK(*send_slots_from("1048576") == kSendSlotsMax);
  for (const char* bad : {"0", "3", "2097152", "-4", "4k", " 4", "4 ", "0x10", "99999999999999999999"}) {
    const auto r = send_slots_from(bad);
    CHECK_FALSE(r);
    CHECK(r.error.find("SKEWSCOPE_SEND_SLOTS='") == 0);
  }
}
