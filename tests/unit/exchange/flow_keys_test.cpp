#include "exchange/flow_keys.hpp"

#include <doctest/doctest.h>

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

FlowKey reverse(const FlowKey& f) { return FlowKey{f.dst_addr, f.src_addr, f.dst_port, f.src_port}; }

}  // namespace

TEST_CASE("the key is the unordered pair of host addresses") {
  FlowKey f{v4(10, 77, 0, 2), v4(10, 77, 0, 1), 41000, 7000};
  CHECK(host_pair_key(f) == "10.77.0.1|10.77.0.2");
  CHECK(host_pair_key(reverse(f)) == "10.77.0.1|10.77.0.2");
  FlowKey other_ports{v4(10, 77, 0, 1), v4(10, 77, 0, 2), 5, 6};
  CHECK(host_pair_key(other_ports) == host_pair_key(f));
  Address six{0x20, 0x01, 0x0d, 0xb8};
  six[15] = 1;
  FlowKey v6{six, v4(10, 0, 0, 1), 1, 2};
  CHECK(host_pair_key(v6) == "10.0.0.1|2001:db8::1");  // mapped v4 sorts before 2001::
}

TEST_CASE("sampling gives both directions of a connection the same verdict") {
  for (std::uint32_t n : {1u, 2u, 4u, 16u}) {
    std::size_t kept = 0, total = 0;
    for (std::uint16_t port = 30000; port < 34000; ++port) {
      FlowKey f{v4(10, 77, 0, 1), v4(10, 77, 0, 2), port, 7000};
      CHECK(flow_sampled(f, n) == flow_sampled(reverse(f), n));
      CHECK(canonical_flow_hash(f) == canonical_flow_hash(reverse(f)));
      kept += flow_sampled(f, n);
      ++total;
    }
    // About 1 in n, and reproducible: the hash is fixed arithmetic.
    CHECK(static_cast<double>(kept) == doctest::Approx(static_cast<double>(total) / n).epsilon(0.15));
  }
  FlowKey f{v4(10, 77, 0, 1), v4(10, 77, 0, 2), 41000, 7000};
  CHECK(canonical_flow_hash(f) == 11745749160377739752ull);  // pinned: agents of every build agree
}

}  // namespace skewscope::exchange
