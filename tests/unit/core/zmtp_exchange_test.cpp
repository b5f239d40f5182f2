// ZeroMQ messages across hosts: real recorded bytes (tests/data/protocols, a libzmq PUSH that
// downgrades to ZMTP/2.0 for a JeroMQ PULL, and libzmq <-> libzmq) parsed per host by
// MessagePairing, each host's message halves diverted to the exchange, carried in exchange
// records (the zmtp_halves field) and paired by the owner's RemotePairing: exact span counts.
#include <doctest/doctest.h>

#include "capture/payload_decode.hpp"
#include "capture_file.hpp"
#include "core/agent_report.hpp"
#include "correlate/message_pairing.hpp"
#include "exchange/record_codec.hpp"
#include "exchange/remote_pairing.hpp"
#include "remote_report.hpp"
#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {
namespace {

namespace pt = protocols::testing;

const std::string kData = SKEWSCOPE_PROTOCOL_DATA;
constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kRealtimeMinusMono = 1'790'000'000 * kSecond;

Address v4(std::uint8_t d) { return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, d}; }

// The connecting PUSH on host a (10.77.0.1:40000), the PULL on host b (10.77.0.2:5555).
const FlowKey kAtoB{v4(1), v4(2), 40000, 5555};
const FlowKey kBtoA{v4(2), v4(1), 5555, 40000};

std::vector<pt::Record> capture(const std::string& prefix) {
  const auto files = pt::captures(kData, prefix);
  REQUIRE(files.size() == 1);
  return pt::load_capture(files[0]);
}

// A recording as one host's payload chunks: direction 0 (client -> server) is host a's sends and
// host b's receives; direction 1 the other way.
struct Host {
  explicit Host(DomainId d) : domain(d) {}
  DomainId domain;
  MessagePairing pairing;
  std::vector<Half> diverted;
  std::vector<Span> spans;
  std::vector<MessageSpanInfo> info;

  void feed(const pt::Chunk& c, bool client_side) {
    const bool send = (c.direction == 0) == client_side;
    PayloadChunk p;
    p.half.kind = send ? HalfKind::send : HalfKind::recv;
    p.half.flow = c.direction == 0 ? kAtoB : kBtoA;
    p.half.seq = c.chunk.seq;
    p.half.bytes = c.chunk.length;
    p.half.capture_ns = static_cast<std::int64_t>(c.chunk.ts_ns);
    p.half.domain = domain;
    p.protocol = PayloadProtocol::zmtp;
    p.prefix = c.chunk.prefix;
    pairing.add(
        p, [](DomainId, std::int64_t ns) { return ns + kRealtimeMinusMono; }, spans, info);
  }
};

// Both hosts' halves of one recording; `divert`: the exchange takes every ZMTP half.
void run_hosts(const std::vector<pt::Record>& records, Host& a, Host& b, bool divert) {
  if (divert) {
    a.pairing.divert_zmtp_halves([&a](const Half& h) {
      a.diverted.push_back(h);
      return true;
    });
    b.pairing.divert_zmtp_halves([&b](const Half& h) {
      b.diverted.push_back(h);
      return true;
    });
  }
  for (const auto& c : pt::to_chunks(records)) {
    a.feed(c, true);
    b.feed(c, false);
  }
}

WireBatch batch_of(const std::string& host, const std::string& domain) {
  WireBatch w;
  w.host = host;
  w.domains = {domain};
  return w;
}

WireBatch to_batch(const std::string& host, const std::string& domain, const std::vector<Half>& halves) {
  WireBatch w = batch_of(host, domain);
  for (const Half& h : halves) w.halves.push_back({h.kind, h.transport, h.flow, h.seq, h.bytes, h.domain_ns, 0});
  return w;
}

}  // namespace

TEST_CASE("zmtp across hosts: one agent per host, the owner pairs every message (libzmq, and a downgrade)") {
  for (const char* name : {"zmtp-pushpull", "zmtp-v2-downgrade-push", "zmtp-v2-jeromq"}) {
    CAPTURE(name);
    const auto records = capture(name);
    // Without the exchange: what each host's parser finds.
    Host la(0), lb(1);
    run_hosts(records, la, lb, false);
    const std::uint64_t messages = la.pairing.counters().zmtp_send_messages;
    CHECK(messages == 1500);
    CHECK(lb.pairing.counters().zmtp_recv_messages == messages);

    // With it: every half leaves its host, none pairs there.
    Host a(0), b(0);
    run_hosts(records, a, b, true);
    CHECK(a.spans.empty());
    CHECK(b.spans.empty());
    CHECK(a.pairing.counters().zmtp_diverted == messages);
    CHECK(b.pairing.counters().zmtp_diverted == messages);
    for (const Half& h : a.diverted) CHECK(h.transport == Transport::zmtp);

    // Each host's halves in its own exchange record (through the codec), both to the owner.
    DomainRegistry domains{"owner", true};
    RemotePairing owner{CorrelatorLimits{}, 5 * kSecond, estimate::Config{}};
    const std::int64_t now = 100 * kSecond;
    owner.assign({0}, now);
    for (const auto& [host, domain, halves] :
         {std::tuple{"host-a", "a", &a.diverted}, std::tuple{"host-b", "b", &b.diverted}}) {
      const std::string record = encode_record(to_batch(host, domain, *halves));
      const auto decoded = decode_record(
          std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(record.data()), record.size()));
      REQUIRE(decoded);
      owner.ingest(0, *decoded.value, now, kRealtimeMinusMono, domains);
    }
    ExchangeReport x;
    owner.fill(x);
    CHECK(x.zmtp_messages.sends == messages);
    CHECK(x.zmtp_messages.recvs == messages);
    CHECK(x.zmtp_messages.pairs == messages);
    CHECK(x.zmtp_messages.duplicates == 0);
    const AgentReport r = test::remote_report(owner, domains, now);
    std::uint64_t zmtp_spans = 0, negative = 0;
    for (const auto& p : r.health.pairs) {
      if (p.key.transport != Transport::zmtp) continue;
      CHECK(p.key.src == *domains.find("a"));
      CHECK(p.key.dst == *domains.find("b"));
      zmtp_spans += p.spans;
      negative += p.negative_spans;
    }
    CHECK(zmtp_spans == messages);
    CHECK(negative == 0);  // one clock: the receive is never before the send
  }
}

TEST_CASE("zmtp halves travel as transport 4 in columns, in rows in a field of their own, which a reader checks") {
  WireBatch w = batch_of("host-a", "a");
  w.halves.push_back({HalfKind::send, Transport::tcp, kAtoB, 100, 64, 5 * kSecond, 0});
  w.halves.push_back({HalfKind::send, Transport::zmtp, kAtoB, 100, 20, 5 * kSecond + 10, 0});
  w.halves.push_back({HalfKind::recv, Transport::zmtp, kBtoA, 7, 30, 5 * kSecond + 20, 0});
  // In columns (what the agent writes) their flows are flows of transport 4, beside the TCP one.
  const std::string in_columns = encode_record(w);
  v1::HalvesBatch columns;
  REQUIRE(
      columns.ParseFromArray(in_columns.data() + kEnvelopeBytes, static_cast<int>(in_columns.size() - kEnvelopeBytes)));
  CHECK(columns.halves_size() + columns.zmtp_halves_size() == 0);
  const auto& transports = columns.columns().flow_transport();
  CHECK(std::vector<std::uint32_t>(transports.begin(), transports.end()) == std::vector<std::uint32_t>{0, 4, 4});
  // In rows (the form before columns, still read) they have a field of their own.
  const std::string record = encode_record(w, RecordLayout::rows);
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(record.data()), record.size());
  v1::HalvesBatch pb;
  REQUIRE(pb.ParseFromArray(record.data() + kEnvelopeBytes, static_cast<int>(record.size() - kEnvelopeBytes)));
  CHECK(pb.halves_size() == 1);  // a reader without zmtp_halves sees the TCP half only
  CHECK(pb.zmtp_halves_size() == 2);
  const auto decoded = decode_record(bytes);
  REQUIRE(decoded);
  CHECK(*decoded.value == w);

  auto reencoded = [&pb] {
    std::string payload = pb.SerializeAsString();
    std::string r(kEnvelopeBytes, '\0');
    r[0] = 'S';
    r[1] = 'K';
    r[2] = static_cast<char>(kRecordVersion);
    for (int i = 0; i < 4; ++i) r[4 + i] = static_cast<char>((payload.size() >> (8 * i)) & 0xff);
    return r + payload;
  };
  SUBCASE("a zmtp half that names another transport is invalid") {
    pb.mutable_zmtp_halves(0)->set_transport(0);
    const std::string bad = reencoded();
    const auto d = decode_record({reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size()});
    CHECK_FALSE(d);
    CHECK(d.error == RecordReject::invalid_content);
  }
  SUBCASE("transport zmtp among the TCP halves is invalid") {
    pb.mutable_halves(0)->set_transport(static_cast<std::uint32_t>(Transport::zmtp));
    const std::string bad = reencoded();
    const auto d = decode_record({reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size()});
    CHECK_FALSE(d);
    CHECK(d.error == RecordReject::invalid_content);
  }
}

TEST_CASE("zmtp across hosts: a half whose other end never comes ages out, counted") {
  DomainRegistry domains{"owner", true};
  RemotePairing owner{CorrelatorLimits{}, 5 * kSecond, estimate::Config{}};
  const std::int64_t now = 100 * kSecond;
  owner.assign({0}, now);
  WireBatch w = batch_of("host-a", "a");
  w.halves.push_back({HalfKind::send, Transport::zmtp, kAtoB, 100, 20, now + kRealtimeMinusMono, 0});
  owner.ingest(0, w, now, kRealtimeMinusMono, domains);
  owner.tick(now + 60 * kSecond, false);
  ExchangeReport x;
  owner.fill(x);
  CHECK(x.zmtp_messages.pairs == 0);
  CHECK(x.zmtp_messages.unpaired_sends == 1);
}

}  // namespace skewscope::exchange
