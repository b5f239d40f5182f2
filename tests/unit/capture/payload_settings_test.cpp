// The payload capture's settings as the agent's flags give them: the ring size (a power of two
// from 1 to 256 MiB, the only sizes a BPF ring buffer takes here) and the operator-named ports.
#include <doctest/doctest.h>

#include "capture/payload_settings.hpp"
#include "skewscope/abi/payload_event.h"

using namespace skewscope;

TEST_CASE("--payload-ring-mb takes powers of two from 1 to 256 MiB") {
  CHECK(*parse_payload_ring_mb(1) == 1u << 20);
  CHECK(*parse_payload_ring_mb(32) == 32u << 20);
  CHECK(*parse_payload_ring_mb(256) == 256u << 20);
  for (std::uint32_t bad : {0u, 3u, 24u, 512u}) {
    CAPTURE(bad);
    const auto r = parse_payload_ring_mb(bad);
    CHECK(!r);
    CHECK(r.error.find("power of two") != std::string::npos);
  }
}

TEST_CASE("--payload-port names a protocol and a port") {
  auto p = parse_payload_port("kafka=9092");
  REQUIRE(p);
  CHECK(p->port == 9092);
  CHECK(p->protocol == SKEWSCOPE_PROTO_KAFKA);
  p = parse_payload_port("zmtp=5555");
  REQUIRE(p);
  CHECK(p->protocol == SKEWSCOPE_PROTO_ZMTP);
  for (const char* bad : {"http=80", "kafka=0", "kafka", "kafka=65536", "kafka=9x"}) {
    CAPTURE(bad);
    p = parse_payload_port(bad);
    CHECK(!p);
    CHECK(!p.error.empty());
  }
}

TEST_CASE("--payload-detect is auto or ports") {
  CHECK(*parse_payload_detect("auto"));
  CHECK_FALSE(*parse_payload_detect("ports"));
  CHECK(!parse_payload_detect("both"));
}

TEST_CASE("an unscoped capture writes no scope") {
  PayloadSettings settings;  // without --only-domains
  CHECK(fill_payload_scope(nullptr, settings));
}
