// The status table `skewscope status` prints, from the status JSON of a report (tests/unit/api/
// api_test.cpp checks that JSON's fields).
#include <doctest/doctest.h>

#include "api/status_json.hpp"
#include "client/status_table.hpp"
#include "sample_report.hpp"

using namespace skewscope;
using namespace skewscope::test;

TEST_CASE("status table: a violated pair is said so") {
  auto j = status_json(sample_report());
  CHECK(render_status_table(j).find("violated") != std::string::npos);
}
