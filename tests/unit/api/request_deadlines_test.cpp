#include <doctest/doctest.h>

#include <algorithm>

#include "api/request_deadlines.hpp"

using namespace skewscope;

TEST_CASE("a connection is cut once its request has taken longer than the limit") {
  RequestDeadlines d(5'000);
  d.opened(1, 10, 0);
  d.opened(2, 11, 1'000);
  CHECK(d.expire(4'999).empty());
  CHECK(d.expire(5'000) == std::vector<int>{10});
  CHECK(d.expire(5'500).empty());  // each descriptor is returned once
  CHECK(d.expire(6'000) == std::vector<int>{11});
  CHECK(d.cut_total() == 2);
  CHECK(d.open_connections() == 2);  // until the server reports them closed
  d.closed(1);
  d.closed(2);
  CHECK(d.open_connections() == 0);
}

TEST_CASE("a completed response restarts the clock; trickling does not") {
  RequestDeadlines d(5'000);
  d.opened(7, 3, 0);
  d.completed(7, 4'000);  // keep-alive: the next request gets a full period
  CHECK(d.expire(8'999).empty());
  CHECK(d.expire(9'000) == std::vector<int>{3});
  d.completed(7, 9'500);  // too late: a cut connection stays cut
  CHECK(d.expire(20'000).empty());
}

TEST_CASE("closed connections are forgotten; unknown ones are ignored") {
  RequestDeadlines d(100);
  d.opened(1, 5, 0);
  d.closed(1);
  d.completed(1, 50);
  d.closed(99);
  CHECK(d.expire(1'000).empty());
  // A descriptor number reused by a new connection belongs to that connection only.
  d.opened(2, 5, 900);
  CHECK(d.expire(950).empty());
  CHECK(d.expire(1'000) == std::vector<int>{5});
}
