// Translations from a router across the exchange: the record fields, the owner's table, and the
// owner's re-keying of the client's halves (before and after the translation arrives), which the
// owner of the server's host pair then pairs with the server's halves.
#include <doctest/doctest.h>

#include "core/agent_report.hpp"
#include "exchange/flow_keys.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/remote_nat.hpp"
#include "exchange/remote_pairing.hpp"
#include "remote_report.hpp"

namespace skewscope::exchange {
namespace {

Address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kRealtimeMinusMono = 1'790'000'000 * kSecond;

// Client 10.78.1.1:40000 -> server 10.78.2.3:7000, MASQUERADEd by the router to 10.78.2.2:50000.
const FlowKey kClientKey{v4(10, 78, 1, 1), v4(10, 78, 2, 3), 40000, 7000};
const FlowKey kServerKey{v4(10, 78, 2, 2), v4(10, 78, 2, 3), 50000, 7000};
FlowKey turned(const FlowKey& k) { return FlowKey{k.dst_addr, k.src_addr, k.dst_port, k.src_port}; }

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

WireTranslation masquerade(std::int64_t from_ns, std::int64_t until_ns = 0) {
  return WireTranslation{kClientKey, kServerKey, from_ns + kRealtimeMinusMono,
                         until_ns ? until_ns + kRealtimeMinusMono : 0};
}

}  // namespace

TEST_CASE("translations and the forwarded mark survive encode and decode") {
  WireBatch b;
  b.host = "router";
  b.translations.push_back(masquerade(kSecond));
  b.translations.push_back(masquerade(kSecond, 3 * kSecond));
  b.forwarded = true;
  DecodedRecord d = decode_record(bytes_of(encode_record(b)));
  REQUIRE(d.value);
  CHECK(*d.value == b);
}

TEST_CASE("a malformed translation rejects the whole record") {
  auto rejected = [](WireTranslation t) {
    WireBatch b;
    b.host = "router";
    b.translations.push_back(t);
    DecodedRecord d = decode_record(bytes_of(encode_record(b)));
    return !d.value && d.error == RecordReject::invalid_content;
  };
  WireTranslation ok = masquerade(kSecond);
  CHECK_FALSE(rejected(ok));
  WireTranslation same = ok;
  same.translated = same.original;
  CHECK(rejected(same));  // translates nothing
  WireTranslation port0 = ok;
  port0.translated.src_port = 0;
  CHECK(rejected(port0));
  WireTranslation no_start = ok;
  no_start.valid_from_ns = 0;
  CHECK(rejected(no_start));
  WireTranslation ends_before = ok;
  ends_before.valid_until_ns = ok.valid_from_ns - 1;
  CHECK(rejected(ends_before));
}

TEST_CASE("the owner's table: both directions, the validity with its slack, the linger, the bound") {
  RemoteTranslations t(RemoteNatLimits{2, 10 * kSecond, 5 * kSecond});
  t.learn(masquerade(100 * kSecond), 0);
  const std::int64_t at = 101 * kSecond + kRealtimeMinusMono;
  CHECK(t.translate(kClientKey, at) == kServerKey);
  CHECK(t.translate(turned(kClientKey), at) == turned(kServerKey));
  CHECK_FALSE(t.translate(kServerKey, at));  // the responder's key is not translated again
  CHECK(t.translate(kClientKey, 96 * kSecond + kRealtimeMinusMono) == kServerKey);  // within the slack
  CHECK_FALSE(t.translate(kClientKey, 94 * kSecond + kRealtimeMinusMono));          // before it held
  CHECK(t.counters().outside_window == 1);

  // Its end arrives: it translates up to the end (+ slack), and is forgotten a linger later.
  t.learn(masquerade(100 * kSecond, 200 * kSecond), 1 * kSecond);
  CHECK(t.translate(kClientKey, 204 * kSecond + kRealtimeMinusMono) == kServerKey);
  CHECK_FALSE(t.translate(kClientKey, 206 * kSecond + kRealtimeMinusMono));
  t.expire(10 * kSecond);
  CHECK(t.translations() == 1);
  t.expire(11 * kSecond);
  CHECK(t.translations() == 0);
  CHECK(t.counters().expired == 1);

  // Bounded: a third translation evicts the oldest.
  for (std::uint16_t p = 1; p <= 3; ++p) {
    WireTranslation w = masquerade(100 * kSecond);
    w.original.src_port = static_cast<std::uint16_t>(40000 + p);
    w.translated.src_port = static_cast<std::uint16_t>(50000 + p);
    t.learn(w, 20 * kSecond);
  }
  CHECK(t.translations() == 2);
  CHECK(t.counters().evicted_full == 1);
  CHECK(t.counters().received == 5);
}

namespace {

// Two owners: one of the client's host pair (partition 0), one of the server's (partition 1).
struct TwoOwners {
  DomainRegistry domains_a{"owner-a", true}, domains_b{"owner-b", true};
  RemotePairing client_pair{CorrelatorLimits{1 << 18, 2 * kSecond, kSecond}, 5 * kSecond, estimate::Config{}};
  RemotePairing server_pair{CorrelatorLimits{1 << 18, 2 * kSecond, kSecond}, 5 * kSecond, estimate::Config{}};
  TwoOwners() {
    client_pair.assign({0}, 0);
    server_pair.assign({1}, 0);
  }
  static WireBatch halves(const char* host, const char* domain, HalfKind kind, const FlowKey& flow, std::uint32_t seq,
                          std::int64_t t) {
    WireBatch b;
    b.host = host;
    b.domains = {domain};
    b.halves.push_back({kind, Transport::tcp, flow, seq, 100, t + kRealtimeMinusMono, 0});
    return b;
  }
  // Request i from the client (its send and its reply's receive, keyed as the client sees them)
  // to the owner of the client's pair, and the server's (keyed as it sees them) to the other.
  void request(std::uint32_t i, std::int64_t t, std::int64_t server_skew = 0) {
    client_pair.ingest(0, halves("h1", "client", HalfKind::send, kClientKey, 1000 + 100 * i, t), t, kRealtimeMinusMono,
                       domains_a);
    client_pair.ingest(0, halves("h1", "client", HalfKind::recv, turned(kClientKey), 9000 + 100 * i, t + 200'000), t,
                       kRealtimeMinusMono, domains_a);
    server_pair.ingest(1, halves("h3", "server", HalfKind::recv, kServerKey, 1000 + 100 * i, t + 50'000 + server_skew),
                       t, kRealtimeMinusMono, domains_b);
    server_pair.ingest(
        1, halves("h3", "server", HalfKind::send, turned(kServerKey), 9000 + 100 * i, t + 100'000 + server_skew), t,
        kRealtimeMinusMono, domains_b);
  }
  void translation(const WireTranslation& w, std::int64_t t) {
    WireBatch b;
    b.host = "router";
    b.translations.push_back(w);
    client_pair.ingest(0, b, t, kRealtimeMinusMono, domains_a);
  }
  // What the client pair's owner forwards, through the codec, to the server pair's owner.
  std::size_t forward(std::int64_t t) {
    std::vector<std::pair<std::string, WireBatch>> out;
    client_pair.take_forwarded(out);
    std::size_t n = 0;
    for (auto& [key, batch] : out) {
      CHECK(key == host_pair_key(kServerKey));
      CHECK(batch.forwarded);
      batch.host = "owner-a";
      DecodedRecord d = decode_record(bytes_of(encode_record(batch)));
      REQUIRE(d.value);
      n += d.value->halves.size();
      server_pair.ingest(1, *d.value, t, kRealtimeMinusMono, domains_b);
    }
    return n;
  }
  AgentReport report(RemotePairing& p, DomainRegistry& d, std::int64_t now) {
    p.tick(now, true);
    return test::remote_report(p, d, now);
  }
};

}  // namespace

TEST_CASE("a router's translation re-keys the client's halves, even those that came first, and both ends pair") {
  TwoOwners o;
  const std::int64_t t0 = 10 * kSecond;
  o.request(0, t0);                                    // before the translation: waits unpaired
  o.translation(masquerade(t0 - kMs), t0 + 30 * kMs);  // arrives late: the waiting halves are taken back
  for (std::uint32_t i = 1; i < 50; ++i) o.request(i, t0 + i * kMs);
  CHECK(o.forward(t0 + 100 * kMs) == 100);
  ExchangeReport x;
  o.client_pair.fill(x);
  CHECK(x.nat.translations == 1);
  CHECK(x.nat.owner.halves_forwarded == 100);
  CHECK(x.nat.owner.halves_taken_back == 2);

  const AgentReport server = o.report(o.server_pair, o.domains_b, t0 + 4 * kSecond);
  REQUIRE(server.health.pairs.size() == 2);
  for (const PairReport& p : server.health.pairs) {
    CHECK(p.spans == 50);
    CHECK(p.negative_spans == 0);
  }
  ExchangeReport sx;
  o.server_pair.fill(sx);
  CHECK(sx.unpaired_sends == 0);
  CHECK(sx.nat.owner.halves_forwarded == 0);  // forwarded halves are not translated again
  // Nothing was left waiting under the client's key on the first owner.
  const AgentReport client = o.report(o.client_pair, o.domains_a, t0 + 4 * kSecond);
  CHECK(client.health.pairs.empty());
  ExchangeReport cx;
  o.client_pair.fill(cx);
  CHECK(cx.unpaired_sends == 0);
}

TEST_CASE("a skew of the server's clock is seen through the router's translation") {
  TwoOwners o;
  const std::int64_t t0 = 10 * kSecond;
  o.translation(masquerade(t0 - kMs), t0);
  for (std::uint32_t i = 0; i < 20; ++i) o.request(i, t0 + i * kMs, -50 * kMs);
  CHECK(o.forward(t0 + 100 * kMs) == 40);
  const AgentReport server = o.report(o.server_pair, o.domains_b, t0 + 4 * kSecond);
  REQUIRE(server.health.pairs.size() == 2);
  for (const PairReport& p : server.health.pairs) {
    CHECK(p.spans == 20);
    const bool request = o.domains_b.name(p.key.src) == "client";
    CHECK(p.negative_spans == (request ? 20u : 0u));
  }
}

TEST_CASE("forwarded halves beyond the pairing table's bound are dropped and counted") {
  DomainRegistry domains{"owner", true};
  RemotePairing p{CorrelatorLimits{4, 2 * kSecond, kSecond}, 5 * kSecond, estimate::Config{}};
  p.assign({0}, 0);
  WireBatch b;
  b.host = "router";
  b.translations.push_back(masquerade(kSecond));
  b.domains = {"client"};
  for (std::uint32_t i = 0; i < 6; ++i)
    b.halves.push_back({HalfKind::send, Transport::tcp, kClientKey, 100 * i, 100, kSecond + kRealtimeMinusMono, 0});
  p.ingest(0, b, kSecond, kRealtimeMinusMono, domains);
  std::vector<std::pair<std::string, WireBatch>> out;
  p.take_forwarded(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].second.halves.size() == 4);
  CHECK(p.drops(DropReason::outbox_full) == 2);
}

}  // namespace skewscope::exchange
