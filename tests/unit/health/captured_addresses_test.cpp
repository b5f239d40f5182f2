#include "health/captured_addresses.hpp"

#include <doctest/doctest.h>

using namespace skewscope;

namespace {

constexpr std::int64_t kWindow = 3'000'000'000;

Address host(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

}  // namespace

TEST_CASE("an address is captured for a window after a half last came from it") {
  CapturedAddresses seen(kWindow);
  CHECK_FALSE(seen.captured(host(1), 0));
  seen.learn(host(1), 1'000);
  CHECK(seen.captured(host(1), 1'000 + kWindow - 1));
  CHECK_FALSE(seen.captured(host(1), 1'000 + kWindow));
  CHECK_FALSE(seen.captured(host(2), 1'000));
}

TEST_CASE("a half from a recent address renews it, through the two-address fast path too") {
  CapturedAddresses seen(kWindow);
  seen.learn(host(1), 0);
  seen.learn(host(2), 0);
  for (std::int64_t t = 1; t <= 10; ++t) {  // both ends of one conversation, for ten windows
    seen.learn(host(1), t * kWindow / 2);
    seen.learn(host(2), t * kWindow / 2);
    seen.expire(t * kWindow / 2);
  }
  CHECK(seen.captured(host(1), 5 * kWindow + 1));
  CHECK(seen.captured(host(2), 5 * kWindow + 1));
  seen.learn(host(1), 4 * kWindow);  // out of order: an older stamp never moves it back
  CHECK(seen.captured(host(1), 5 * kWindow + 1));
}

TEST_CASE("expiry forgets the dead addresses, keeps the live ones, and frees room in a full table") {
  CapturedAddresses seen(kWindow, 2);
  seen.learn(host(1), 0);
  seen.learn(host(2), kWindow);
  seen.learn(host(3), kWindow);  // full
  CHECK(seen.not_learned() == 1);
  CHECK(seen.size() == 2);
  seen.expire(kWindow + kWindow / 2);  // host 1 last seen a window and a half ago
  CHECK(seen.size() == 1);
  seen.learn(host(2), 2 * kWindow);  // its fast-path entry was erased or kept: either way it renews
  CHECK(seen.captured(host(2), 2 * kWindow + kWindow - 1));
  seen.learn(host(3), 2 * kWindow);
  CHECK(seen.size() == 2);
  CHECK(seen.captured(host(3), 2 * kWindow));
  CHECK_FALSE(seen.captured(host(1), 2 * kWindow));
}
