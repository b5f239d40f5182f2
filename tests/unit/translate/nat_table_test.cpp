#include "translate/nat_table.hpp"

#include <doctest/doctest.h>

#include "captured_conntrack.hpp"

using namespace skewscope;
using namespace skewscope::translate;
using skewscope::test::from_hex;

namespace {

constexpr std::int64_t kS = 1'000'000'000;

ConntrackEntry captured(std::string_view hex) {
  std::vector<ConntrackEntry> entries;
  ConntrackRejects rejected{};
  decode_conntrack_datagram(from_hex(hex), entries, rejected);
  REQUIRE(entries.size() == 1);
  return entries[0];
}

Address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  Address x{};
  x[10] = x[11] = 0xff;
  x[12] = a, x[13] = b, x[14] = c, x[15] = d;
  return x;
}

const Address kClient = v4(10, 98, 1, 1), kVip = v4(10, 96, 0, 10), kServer = v4(10, 98, 2, 3),
              kRouter = v4(10, 98, 2, 2);

// A connection client:port -> server:8080 translated by SNAT to router:port (synthetic entry).
ConntrackEntry snat(std::uint16_t port, std::uint16_t router_port) {
  ConntrackEntry e;
  e.protocol = 6;
  e.original = {kClient, kServer, port, 8080};
  e.reply = {kServer, kRouter, 8080, router_port};
  return e;
}

}  // namespace

TEST_CASE("DNAT to a ClusterIP: both directions of the client's halves become the pod's tuple") {
  NatTable table;
  table.observe(captured(test::kClientDnatNew), 0);
  CHECK(table.mappings() == 1);
  FlowKey request{kClient, kVip, 55856, 80};
  CHECK(table.translate(request));
  CHECK(request == FlowKey{kClient, kServer, 55856, 8080});
  FlowKey reply{kVip, kClient, 80, 55856};
  CHECK(table.translate(reply));
  CHECK(reply == FlowKey{kServer, kClient, 8080, 55856});
  // The server's own halves already carry the tuple it sees: unchanged.
  FlowKey server_side{kClient, kServer, 55856, 8080};
  CHECK_FALSE(table.translate(server_side));
  CHECK(table.counters().halves_translated == 2);
}

TEST_CASE("a client's DNAT then a router's MASQUERADE compose into what the server sees") {
  NatTable table;
  table.observe(captured(test::kClientDnatNew), 0);
  table.observe(captured(test::kRouterMasqueradeNew), 0);
  FlowKey request{kClient, kVip, 55856, 80};
  CHECK(table.translate(request));
  CHECK(request == FlowKey{kRouter, kServer, 55856, 8080});
  FlowKey reply{kVip, kClient, 80, 55856};
  CHECK(table.translate(reply));
  CHECK(reply == FlowKey{kServer, kRouter, 8080, 55856});
}

TEST_CASE("entries without translation and of other protocols teach nothing, and are counted") {
  NatTable table;
  table.observe(captured(test::kClientPlainNew), 0);
  ConntrackEntry udp = snat(5000, 5000);
  udp.protocol = 17;
  table.observe(udp, 0);
  CHECK(table.empty());
  CHECK(table.counters().entries_plain == 1);
  CHECK(table.counters().entries_other_protocol == 1);
  FlowKey k{kClient, kServer, 5000, 8080};
  CHECK_FALSE(table.translate(k));
}

TEST_CASE("a destroyed connection still translates for the linger, then is removed") {
  NatTable table(NatLimits{16, 10 * kS});
  table.observe(snat(40000, 61000), 0);
  ConntrackEntry gone = snat(40000, 61000);
  gone.change = ConntrackChange::destroyed;
  table.observe(gone, 5 * kS);
  table.expire(14 * kS);
  FlowKey k{kClient, kServer, 40000, 8080};
  CHECK(table.translate(k));
  table.expire(15 * kS);
  CHECK(table.empty());
  CHECK(table.counters().destroyed == 1);
  CHECK(table.counters().expired == 1);
}

TEST_CASE("a reused tuple takes its new translation, and the old one's linger does not remove it") {
  NatTable table(NatLimits{16, 10 * kS});
  table.observe(snat(40000, 61000), 0);
  ConntrackEntry gone = snat(40000, 61000);
  gone.change = ConntrackChange::destroyed;
  table.observe(gone, 1 * kS);
  table.observe(snat(40000, 62000), 2 * kS);  // same client port, a new SNAT port
  table.expire(20 * kS);
  FlowKey k{kClient, kServer, 40000, 8080};
  CHECK(table.translate(k));
  CHECK(k.src_port == 62000);
  CHECK(table.mappings() == 1);
  CHECK(table.counters().expired == 0);
}

TEST_CASE("a full table evicts its oldest mapping and counts it") {
  NatTable table(NatLimits{3, 10 * kS});
  for (std::uint16_t i = 0; i < 5; ++i) table.observe(snat(static_cast<std::uint16_t>(40000 + i), 60000 + i), 0);
  CHECK(table.mappings() == 3);
  CHECK(table.counters().evicted_full == 2);
  FlowKey oldest{kClient, kServer, 40000, 8080};
  CHECK_FALSE(table.translate(oldest));
  FlowKey newest{kClient, kServer, 40004, 8080};
  CHECK(table.translate(newest));
  // A repeated entry (an update, or the dump listing a known one) is not learnt again.
  table.observe(snat(40004, 60004), 0);
  CHECK(table.counters().entries_translated == 5);
}

TEST_CASE("churn behind one long-lived connection keeps the eviction queue bounded") {
  NatTable table(NatLimits{4, 0});
  table.observe(snat(1, 1), 0);  // lives on
  for (int i = 0; i < 10'000; ++i) {
    const auto port = static_cast<std::uint16_t>(2 + i % 50'000);
    table.observe(snat(port, port), i);
    ConntrackEntry gone = snat(port, port);
    gone.change = ConntrackChange::destroyed;
    table.observe(gone, i);
    table.expire(i);
  }
  CHECK(table.mappings() == 1);
  FlowKey first{kClient, kServer, 1, 8080};
  CHECK(table.translate(first));
}

TEST_CASE("a loop of mappings ends after the hop limit, counted") {
  NatTable table;
  ConntrackEntry a;
  a.protocol = 6;
  a.original = {kClient, kServer, 1, 2};
  a.reply = {kServer, kClient, 2, 3};  // client:1 -> client:3
  ConntrackEntry b = a;
  b.original = {kClient, kServer, 3, 2};
  b.reply = {kServer, kClient, 2, 1};  // client:3 -> client:1
  table.observe(a, 0);
  table.observe(b, 0);
  FlowKey k{kClient, kServer, 1, 2};
  CHECK(table.translate(k));
  CHECK(table.counters().hop_limit == 1);
}

TEST_CASE("with the exchange, every translation learnt and ended is kept for shipping, bounded") {
  NatTable table;
  table.keep_learnt(2);
  table.observe(snat(40000, 50000), 1 * kS);
  ConntrackEntry gone = snat(40000, 50000);
  gone.change = ConntrackChange::destroyed;
  table.observe(gone, 3 * kS);
  table.observe(snat(40001, 50001), 4 * kS);  // a third: the list (2) is full
  std::vector<LearntTranslation> learnt;
  table.take_learnt(learnt);
  REQUIRE(learnt.size() == 2);
  CHECK(learnt[0].original == FlowKey{kClient, kServer, 40000, 8080});
  CHECK(learnt[0].translated == FlowKey{kRouter, kServer, 50000, 8080});
  CHECK(learnt[0].learnt_ns == 1 * kS);
  CHECK(learnt[0].ended_ns == 0);
  CHECK(learnt[1].original == learnt[0].original);
  CHECK(learnt[1].learnt_ns == 1 * kS);
  CHECK(learnt[1].ended_ns == 3 * kS);
  CHECK(table.counters().learnt_dropped == 1);
  table.take_learnt(learnt);
  CHECK(learnt.empty());
  table.observe(snat(40002, 50002), 5 * kS);
  table.take_learnt(learnt);
  CHECK(learnt.size() == 1);
}

TEST_CASE("without the exchange nothing is kept") {
  NatTable table;
  table.observe(snat(40000, 50000), 1 * kS);
  std::vector<LearntTranslation> learnt;
  table.take_learnt(learnt);
  CHECK(learnt.empty());
  CHECK(table.counters().learnt_dropped == 0);
}
