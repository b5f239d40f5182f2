// The option checks of the command line: numbers, listen addresses.
#include <doctest/doctest.h>

#include <netdb.h>

#include "cli/listen_address.hpp"
#include "cli/option_checks.hpp"

using namespace skewscope;

TEST_CASE("numeric options: signs, NaN, infinities and out-of-range values are refused") {
  CHECK(check_count("1", 1, kMaxPendingLimit));
  CHECK(check_count("262144", 1, kMaxPendingLimit));
  CHECK(check_count("4194304", 1, kMaxPendingLimit));
  for (const char* bad : {"-1", "0", "4194305", "18446744073709551615", "99999999999999999999", "+5", "1.5", "1e3",
                          " 5", "5 ", "", "nan", "0x10"}) {
    INFO(bad);
    CHECK_FALSE(check_count(bad, 1, kMaxPendingLimit));
  }
  CHECK(check_count("-1", 1, kMaxPendingLimit).error.find("-1") != std::string::npos);
  CHECK(check_finite("0.5", 0.01, 1));
  CHECK(check_finite("+0.25", 0.01, 1));
  CHECK(check_finite("1", 0.01, 1));
  CHECK(check_finite("100", 0, 10000));
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "0", "1.01", "-0.5", "", "x", "0.5x"}) {
    INFO(bad);
    CHECK_FALSE(check_finite(bad, 0.01, 1));
  }
  CHECK_FALSE(check_finite("-1", 0, 10000));
  CHECK_FALSE(check_finite("10000.5", 0, 10000));
}

TEST_CASE("listen addresses") {
  CHECK(parse_listen_address("0.0.0.0:9477")->port == 9477);
  CHECK(parse_listen_address("[::1]:80")->host == "::1");
  CHECK(parse_listen_address("127.0.0.1:0")->port == 0);
  for (const char* bad : {"9477", ":9477", "host:", "host:70000", "host:-1", "[::1:80"}) {
    INFO(bad);
    CHECK_FALSE(parse_listen_address(bad));
  }
}

TEST_CASE("listen addresses are resolved; a resolver failure names the resolver's reason") {
  CHECK(resolve_listen_address({"127.0.0.1", 0}));
  CHECK(resolve_listen_address({"0.0.0.0", 9477}));
  CHECK(resolve_listen_address({"::1", 0}));
  const std::string error = resolve_listen_address({"bogus.invalid", 1}).error;
  INFO(error);
  REQUIRE_FALSE(error.empty());
  CHECK(error.find("bogus.invalid") != std::string::npos);
  CHECK(error.find("Success") == std::string::npos);
  // .invalid never resolves (RFC 6761): the resolver says there is no such name, or that it
  // could not ask (no DNS in a sandbox). Either way its own text is in the message.
  const bool resolver_text = error.find(gai_strerror(EAI_NONAME)) != std::string::npos ||
                             error.find(gai_strerror(EAI_AGAIN)) != std::string::npos ||
                             error.find(gai_strerror(EAI_FAIL)) != std::string::npos ||
                             error.find(gai_strerror(EAI_NODATA)) != std::string::npos;
  CHECK(resolver_text);
}
