#include "translate/conntrack_message.hpp"

#include <doctest/doctest.h>

#include "captured_conntrack.hpp"

using namespace skewscope;
using namespace skewscope::translate;
using skewscope::test::from_hex;

namespace {

Address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  Address x{};
  x[10] = x[11] = 0xff;
  x[12] = a, x[13] = b, x[14] = c, x[15] = d;
  return x;
}

Address fd98(std::uint8_t subnet, std::uint8_t host) {
  Address x{};
  x[0] = 0xfd, x[1] = 0x98, x[3] = subnet, x[15] = host;
  return x;
}

std::vector<ConntrackEntry> decode(const std::vector<std::uint8_t>& bytes, ConntrackRejects& rejected,
                                   DatagramEnd* end = nullptr) {
  std::vector<ConntrackEntry> entries;
  DatagramEnd e = decode_conntrack_datagram(bytes, entries, rejected);
  if (end) *end = e;
  return entries;
}

std::uint64_t total(const ConntrackRejects& r) {
  std::uint64_t n = 0;
  for (auto c : r) n += c;
  return n;
}

}  // namespace

TEST_CASE("a DNAT event from the client's namespace: the VIP in the original, the pod in the reply") {
  ConntrackRejects rejected{};
  auto entries = decode(from_hex(test::kClientDnatNew), rejected);
  REQUIRE(entries.size() == 1);
  CHECK(total(rejected) == 0);
  const ConntrackEntry& e = entries[0];
  CHECK(e.change == ConntrackChange::present);
  CHECK(e.protocol == 6);
  CHECK(e.original == FlowKey{v4(10, 98, 1, 1), v4(10, 96, 0, 10), 55856, 80});
  CHECK(e.reply == FlowKey{v4(10, 98, 2, 3), v4(10, 98, 1, 1), 8080, 55856});
  CHECK((e.status & (1u << 5)) != 0);  // IPS_DST_NAT
  CHECK(e.translated());
}

TEST_CASE("an untranslated connection: the reply is the original turned around") {
  ConntrackRejects rejected{};
  auto entries = decode(from_hex(test::kClientPlainNew), rejected);
  REQUIRE(entries.size() == 1);
  CHECK_FALSE(entries[0].translated());
  CHECK(entries[0].original == FlowKey{v4(10, 98, 1, 1), v4(10, 98, 2, 3), 33818, 8080});
}

TEST_CASE("MASQUERADE on a router, IPv4 and IPv6: the router's address in the reply") {
  ConntrackRejects rejected{};
  auto four = decode(from_hex(test::kRouterMasqueradeNew), rejected);
  REQUIRE(four.size() == 1);
  CHECK(four[0].original == FlowKey{v4(10, 98, 1, 1), v4(10, 98, 2, 3), 55856, 8080});
  CHECK(four[0].reply == FlowKey{v4(10, 98, 2, 3), v4(10, 98, 2, 2), 8080, 55856});
  CHECK(four[0].translated());
  auto six = decode(from_hex(test::kRouterMasqueradeNew6), rejected);
  REQUIRE(six.size() == 1);
  CHECK(six[0].original == FlowKey{fd98(1, 1), fd98(2, 3), 36194, 8080});
  CHECK(six[0].reply == FlowKey{fd98(2, 3), fd98(2, 2), 8080, 36194});
  CHECK(total(rejected) == 0);
}

TEST_CASE("a DELETE message is a destroyed entry, with the tuples it had") {
  ConntrackRejects rejected{};
  auto entries = decode(from_hex(test::kClientDnatDestroy), rejected);
  REQUIRE(entries.size() == 1);
  CHECK(total(rejected) == 0);
  CHECK(entries[0].change == ConntrackChange::destroyed);
  CHECK(entries[0].original == FlowKey{v4(10, 98, 1, 1), v4(10, 96, 0, 10), 56934, 80});
  CHECK(entries[0].reply == FlowKey{v4(10, 98, 2, 3), v4(10, 98, 1, 1), 8080, 56934});
}

TEST_CASE("several messages in one datagram, as a dump delivers them, then its end") {
  auto bytes = from_hex(test::kClientDnatNew);
  auto second = from_hex(test::kRouterMasqueradeNew6);
  bytes.insert(bytes.end(), second.begin(), second.end());
  const std::uint8_t done[] = {20, 0, 0, 0, 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // NLMSG_DONE, MULTI
  bytes.insert(bytes.end(), std::begin(done), std::end(done));
  ConntrackRejects rejected{};
  DatagramEnd end;
  auto entries = decode(bytes, rejected, &end);
  CHECK(entries.size() == 2);
  CHECK(end.dump_done);
  CHECK(end.error == 0);
}

TEST_CASE("a refused dump is an error with its errno") {
  const std::uint8_t error[] = {36, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff,  // -16
                                16, 0, 0, 0, 0, 1, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0};
  ConntrackRejects rejected{};
  DatagramEnd end;
  auto entries = decode(std::vector<std::uint8_t>(std::begin(error), std::end(error)), rejected, &end);
  CHECK(entries.empty());
  CHECK(end.error == 16);  // EBUSY
}

TEST_CASE("bytes cut short anywhere are counted, never read past the end") {
  const auto whole = from_hex(test::kRouterMasqueradeNew6);
  for (std::size_t n = 1; n < whole.size(); ++n) {
    std::vector<std::uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    ConntrackRejects rejected{};
    auto entries = decode(cut, rejected);
    CHECK(entries.empty());
    CHECK(total(rejected) == 1);
  }
  // The netlink header says the whole length, the attributes inside say less: a nested tuple cut.
  auto inner = whole;
  inner[24] = 0x08;  // the original's CTA_TUPLE_IP: its header and half of the source's header
  ConntrackRejects rejected{};
  CHECK(decode(inner, rejected).empty());
  CHECK(total(rejected) == 1);
}

TEST_CASE("an address of a wrong length and a message of another type are rejected by reason") {
  auto bytes = from_hex(test::kClientDnatNew);
  bytes[28] = 0x07;  // the original's CTA_IP_V4_SRC: length 8 -> 7 (a 3-byte address)
  ConntrackRejects rejected{};
  CHECK(decode(bytes, rejected).empty());
  CHECK(rejected[static_cast<std::size_t>(ConntrackReject::bad_address)] == 1);
  auto other = from_hex(test::kClientDnatNew);
  other[5] = 2;  // subsystem 2: conntrack expectations, which the agent does not read
  ConntrackRejects rejected_other{};
  CHECK(decode(other, rejected_other).empty());
  CHECK(rejected_other[static_cast<std::size_t>(ConntrackReject::unexpected_type)] == 1);
}

TEST_CASE("every one-byte corruption of a captured event is decoded or counted, each message once") {
  for (std::string_view hex : {test::kClientDnatNew, test::kRouterMasqueradeNew6, test::kClientDnatDestroy}) {
    const auto whole = from_hex(hex);
    for (std::size_t i = 0; i < whole.size(); ++i) {
      for (std::uint8_t value : {std::uint8_t{0x00}, std::uint8_t{0x03}, std::uint8_t{0x7f}, std::uint8_t{0xff}}) {
        auto bytes = whole;
        bytes[i] = value;
        ConntrackRejects rejected{};
        DatagramEnd end;
        auto entries = decode(bytes, rejected, &end);
        // One message: an entry, a rejection, or (a corrupted type) a dump's end, an error or a
        // no-op; a shortened length field (bytes 0-3) splits it in two, each decoded or counted.
        CHECK(entries.size() + total(rejected) <= (i < 4 ? 2u : 1u));
      }
    }
  }
}
