#include <doctest/doctest.h>

#include "capture/clock_mapping.hpp"
#include "capture/half_decode.hpp"
#include "capture/half_ring_size.hpp"
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
  m.add({2000, 1'001'000});  // same offset (within 1 us): not kept
  CHECK(m.size() == 1);
  m.add({3000, 2'000'000});  // the clock was stepped
  CHECK(m.size() == 2);
  CHECK(m.to_realtime(1500) == 1'000'500);
  CHECK(m.to_realtime(2999) == 1'001'999);
  CHECK(m.to_realtime(3001) == 2'000'001);
  CHECK(m.to_realtime(10) == 999'010);  // older than every sample: the oldest mapping
  m.sample_now();
  CHECK(m.size() >= 2);
}

TEST_CASE("the exchange's mapping keeps every recent sample and interpolates across a slew") {
  constexpr std::int64_t kSecond = 1'000'000'000;
  MonotonicToRealtime m(MonotonicToRealtime::Keep::recent(2 * kSecond));
  CHECK_FALSE(m.interpolated(5));  // no sample: nothing to interpolate between
  m.add({1 * kSecond, 100 * kSecond});
  CHECK_FALSE(m.interpolated(kSecond + 1));                         // only a sample before it
  m.add({1 * kSecond + 100'000'000, 100 * kSecond + 100'000'000});  // same offset: still kept
  CHECK(m.size() == 2);
  m.add({1 * kSecond + 200'000'000, 100 * kSecond + 200'000'000 + 40'000});  // slewed by 40 us in 100 ms
  CHECK(m.size() == 3);
  CHECK(*m.interpolated(1 * kSecond + 50'000'000) == 100 * kSecond + 50'000'000);
  // A quarter of the way through the slewed interval: a quarter of the 40 us.
  CHECK(*m.interpolated(1 * kSecond + 125'000'000) == 100 * kSecond + 125'000'000 + 10'000);
  CHECK_FALSE(m.interpolated(1 * kSecond + 300'000'000));  // after the newest sample
  CHECK_FALSE(m.interpolated(kSecond - 1));                // before the oldest
  m.add({1 * kSecond + 150'000'000, 0});                   // not after the newest: ignored
  CHECK(m.size() == 3);
  // Older than 2 s behind the newest: dropped, the newest two always kept.
  m.add({4 * kSecond, 103 * kSecond + 40'000});
  CHECK(m.size() == 2);
  CHECK(*m.interpolated(3 * kSecond) == 102 * kSecond + 40'000);
  m.sample_now(3);  // now, long after 4 s of monotonic time: only it and the one before are left
  CHECK(m.size() == 2);
  CHECK(m.to_realtime(4 * kSecond) == 103 * kSecond + 40'000);
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
