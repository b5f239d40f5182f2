// The payload capture's settings as the agent's flags give them: the ring size (a power of two
// from 1 to 256 MiB, the only sizes a BPF ring buffer takes here) and the operator-named ports.
#include <doctest/doctest.h>

#include "capture/payload_settings.hpp"
#include "skewscope/abi/payload_event.h"

using namespace skewscope;

TEST_CASE("--payload-ring-mb takes powers of two from 1 to 256 MiB") {
  std::uint32_t bytes = 0;
  CHECK(parse_payload_ring_mb(1, bytes));
  CHECK(bytes == 1u << 20);
  CHECK(parse_payload_ring_mb(32, bytes));
  CHECK(bytes == 32u << 20);
  CHECK(parse_payload_ring_mb(256, bytes));
  CHECK(bytes == 256u << 20);
  for (std::uint32_t bad : {0u, 3u, 24u, 512u}) {
    CAPTURE(bad);
    bytes = 7;
    const Status s = parse_payload_ring_mb(bad, bytes);
    CHECK(!s);
    CHECK(s.error.find("power of two") != std::string::npos);
    CHECK(bytes == 7);  // untouched on error
  }
}

TEST_CASE("--payload-port names a protocol and a port") {
  PayloadPort p;
  CHECK(parse_payload_port("kafka=9092", p).empty());
  CHECK(p.port == 9092);
  CHECK(p.protocol == SKEWSCOPE_PROTO_KAFKA);
  CHECK(parse_payload_port("zmtp=5555", p).empty());
  CHECK(p.protocol == SKEWSCOPE_PROTO_ZMTP);
  CHECK(!parse_payload_port("http=80", p).empty());
  CHECK(!parse_payload_port("kafka=0", p).empty());
  CHECK(!parse_payload_port("kafka", p).empty());
}

TEST_CASE("an unscoped capture writes no scope") {
  PayloadSettings settings;  // without --only-domains
  CHECK(fill_payload_scope(nullptr, settings));
}
