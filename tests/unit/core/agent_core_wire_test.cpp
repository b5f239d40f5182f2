// --wire-timestamps through the wiring: synthetic wire records fed to AgentCore beside syscall
// halves, and the report's headline (each pair's health and state, the overall health) taken from
// the best timestamp level that paired the pair's traffic.
#include <doctest/doctest.h>

#include "core/agent_core.hpp"
#include "synthetic_halves.hpp"

using namespace skewscope;
using namespace skewscope::test;

namespace {

constexpr std::int64_t kUs = 1'000, kMs = 1'000'000;
constexpr std::uint32_t kPreNetns = 11, kInferNetns = 22;
constexpr std::uint32_t kPreIf = 2, kInferIf = 3;  // each namespace's interface
const Endpoint kPre{1, 40000, kPreNetns}, kInfer{2, 5555, kInferNetns};
constexpr std::int64_t kReportAt = 1'500 * kMs;

// `phc`: the interfaces' hardware stamps are PHC 0's (a reading must still be added to map them).
AgentCore make_core(bool phc = false) {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("pre", kPreNetns));
  REQUIRE(domains.add_netns("infer", kInferNetns));
  AgentCore core(std::move(domains), AgentCoreConfig{});
  WireSetup setup;
  setup.send_path = "tc_egress";
  const int index = phc ? 0 : -1;
  setup.interfaces.push_back({{"veth-pre", false, index, phc}, kPreNetns, kPreIf});
  setup.interfaces.push_back({{"veth-infer", false, index, phc}, kInferNetns, kInferIf});
  core.enable_wire(WirePipelineConfig{}, setup);
  return core;
}

// pre -> infer messages, every 1 ms from 1 s on: the syscall halves 50 us apart (a clean span).
void syscall_traffic(AgentCore& core, int messages, const Endpoint& from = kPre, const Endpoint& to = kInfer) {
  SyntheticStream stream(from, to, 7);
  std::vector<skewscope_half_event> batch;
  for (int i = 0; i < messages; ++i) {
    const std::int64_t t = 1'000 * kMs + i * kMs;
    batch.push_back(stream.write(100, t));
    batch.push_back(stream.read(100, t + 50 * kUs));
  }
  core.ingest(batch);
}

// The same messages at the wire: leaving pre's interface at +10 us, entering infer's at
// `software_recv_us` (before +10 us: the wire level sees the message arrive before it left).
// With `hardware_recv_us`, both carry NIC stamps too (PHC time = system time + 0).
void wire_traffic(AgentCore& core, int messages, std::int64_t software_recv_us,
                  std::optional<std::int64_t> hardware_recv_us = std::nullopt) {
  std::vector<skewscope_wire_event> batch;
  for (int i = 0; i < messages; ++i) {
    const std::int64_t t = 1'000 * kMs + i * kMs;
    const std::uint32_t seq = 7 + static_cast<std::uint32_t>(i) * 100;
    const std::int64_t hw_send = hardware_recv_us ? t + 10 * kUs : 0;
    const std::int64_t hw_recv = hardware_recv_us ? t + *hardware_recv_us * kUs : 0;
    batch.push_back(make_wire_segment(kPre, kInfer, true, seq, 100, t + 10 * kUs, kPreIf, hw_send));
    batch.push_back(make_wire_segment(kPre, kInfer, false, seq, 100, t + software_recv_us * kUs, kInferIf, hw_recv));
  }
  core.ingest_wire(batch);
}

const PairReport& pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst) return p;
  FAIL("no pair " << src << " -> " << dst);
  throw 0;
}

const LevelPair* level(const AgentReport& r, TimestampSource source, const PairKey& key) {
  for (const auto& l : r.wire.pairs)
    if (l.source == source && l.pair.key == key) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("wire records pair through the core, and the report carries their levels and counters") {
  auto core = make_core();
  syscall_traffic(core, 20);
  wire_traffic(core, 20, 30);
  core.observe_wire_source(kReportAt, WireCounters{40, 3, 0, 20, 0, 1, 0});
  AgentReport r = core.report(kReportAt);
  CHECK(r.wire.enabled);
  CHECK(r.wire.send_path == "tc_egress");
  REQUIRE(r.wire.interfaces.size() == 2);
  CHECK(r.wire.interfaces[1].name == "veth-infer");
  CHECK(r.wire.segments == 40);
  CHECK(r.wire.ring_buffer_full == 3);
  CHECK(r.wire.rx_unstamped == 20);
  CHECK(r.wire.not_parsed == 1);
  CHECK(r.wire.software.pairs == 20);
  CHECK(r.wire.hardware.pairs == 0);
  const PairReport& p = pair(r, "pre", "infer");
  const LevelPair* software = level(r, TimestampSource::wire_software, p.key);
  REQUIRE(software);
  CHECK(software->pair.spans == 20);
  CHECK(*software->pair.window.min_span_ns == 20 * kUs);
  CHECK(software->pair.window_lost_halves == 3);  // the ring's losses mark the wire window incomplete
  CHECK_FALSE(level(r, TimestampSource::wire_hardware, p.key));
  CHECK(p.spans == 20);  // the syscall level's own spans: the wire level decides only the verdict
}

TEST_CASE("wire records of the agent's own port, outside every domain, or malformed are counted, not paired") {
  auto core = make_core();
  core.set_own_endpoint(40000, kPreNetns);
  std::vector<skewscope_wire_event> batch;
  batch.push_back(make_wire_segment(kPre, kInfer, true, 1, 100, 1'000 * kMs, kPreIf));  // own port
  batch.push_back(make_wire_segment({1, 41000, 99}, kInfer, true, 1, 100, 1'000 * kMs, kPreIf));
  auto bad = make_wire_segment({1, 41000, kPreNetns}, kInfer, true, 1, 100, 1'000 * kMs, kPreIf);
  bad.direction = 7;
  batch.push_back(bad);
  core.ingest_wire(batch);
  AgentReport r = core.report(kReportAt);
  CHECK(r.wire.segments == 3);
  CHECK(r.wire.own_traffic == 1);
  CHECK(r.wire.outside_domains == 1);
  CHECK(r.wire.rejected == 1);
  CHECK(r.wire.software.sends == 0);
}

TEST_CASE("without --wire-timestamps the report has no wire part and the syscall level decides") {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("pre", kPreNetns));
  REQUIRE(domains.add_netns("infer", kInferNetns));
  AgentCore core(std::move(domains), AgentCoreConfig{});
  CHECK_FALSE(core.wire_enabled());
  syscall_traffic(core, 20);
  wire_traffic(core, 20, 5);  // ignored
  AgentReport r = core.report(kReportAt);
  CHECK_FALSE(r.wire.enabled);
  CHECK(r.wire.pairs.empty());
  CHECK(pair(r, "pre", "infer").health == 1);
  CHECK(r.health.health == 1);
}

TEST_CASE("best level: a wire level that saw inversions decides the pair and the overall health") {
  auto core = make_core();
  syscall_traffic(core, 20);                // clean at the syscall level
  syscall_traffic(core, 20, kInfer, kPre);  // the other direction: syscall only
  wire_traffic(core, 20, 5);                // received 5 us after start, sent at 10 us
  AgentReport r = core.report(kReportAt);
  const PairReport& forward = pair(r, "pre", "infer");
  CHECK(forward.negative_spans == 0);  // the syscall level's own counts stay
  CHECK(forward.health == 0);
  CHECK(forward.state == PairState::violated);
  CHECK(forward.unknown_reason == UnknownReason::none);
  const LevelPair* best = best_level(r.wire.pairs, forward.key);
  REQUIRE(best);
  CHECK(best->source == TimestampSource::wire_software);
  // A pair no wire level paired keeps its syscall verdict.
  const PairReport& backward = pair(r, "infer", "pre");
  CHECK_FALSE(best_level(r.wire.pairs, backward.key));
  CHECK(backward.health == 1);
  CHECK(backward.state == PairState::ok);
  CHECK(r.health.health == 0);
}

TEST_CASE("best level: with both wire levels paired, hardware wins over software") {
  auto core = make_core(true);
  core.add_phc_reading(0, clocks::PhcReadingPoint{1'000 * kMs, 0, 10});
  syscall_traffic(core, 20);
  wire_traffic(core, 20, 5, 30);  // software stamps inverted, the NIC's clean
  AgentReport r = core.report(kReportAt);
  const PairReport& p = pair(r, "pre", "infer");
  REQUIRE(level(r, TimestampSource::wire_software, p.key));
  CHECK(level(r, TimestampSource::wire_software, p.key)->pair.health == 0);
  REQUIRE(level(r, TimestampSource::wire_hardware, p.key));
  CHECK(level(r, TimestampSource::wire_hardware, p.key)->pair.spans == 20);
  CHECK(best_level(r.wire.pairs, p.key)->source == TimestampSource::wire_hardware);
  CHECK(p.health == 1);
  CHECK(p.state == PairState::ok);
  CHECK(r.health.health == 1);
  CHECK(r.wire.hw_unmapped == 0);
}

TEST_CASE("best level: a level without data does not decide") {
  // Hardware stamps with no PHC reading to map them: the hardware level pairs nothing, and the
  // software level (inverted here) decides.
  auto core = make_core(true);
  syscall_traffic(core, 20);
  wire_traffic(core, 20, 5, 30);
  AgentReport r = core.report(kReportAt);
  const PairReport& p = pair(r, "pre", "infer");
  CHECK(r.wire.hw_unmapped == 40);
  CHECK(r.wire.hardware.pairs == 0);
  CHECK_FALSE(level(r, TimestampSource::wire_hardware, p.key));
  CHECK(best_level(r.wire.pairs, p.key)->source == TimestampSource::wire_software);
  CHECK(p.health == 0);
  CHECK(r.health.health == 0);
}

TEST_CASE("best level: unknown when the wire capture or the syscall capture is down") {
  auto core = make_core();
  syscall_traffic(core, 20);
  wire_traffic(core, 20, 5);
  core.mark_wire_down("wire ring buffer gone");
  AgentReport r = core.report(kReportAt);
  CHECK(r.wire.error == "wire ring buffer gone");
  const PairReport& p = pair(r, "pre", "infer");
  for (const auto& l : r.wire.pairs) CHECK(l.pair.state == PairState::unknown);
  CHECK_FALSE(p.health);
  CHECK(p.state == PairState::unknown);
  CHECK_FALSE(r.health.health);

  auto down = make_core();
  syscall_traffic(down, 20);
  wire_traffic(down, 20, 30);
  down.mark_capture_down("ring buffer gone");
  AgentReport d = down.report(kReportAt);
  CHECK(d.wire.error.empty());
  REQUIRE_FALSE(d.wire.pairs.empty());
  for (const auto& l : d.wire.pairs) {
    CHECK_FALSE(l.pair.health);
    CHECK(l.pair.state == PairState::unknown);
  }
  CHECK_FALSE(pair(d, "pre", "infer").health);
  CHECK(d.health.unknown_reason == UnknownReason::capture_down);
  CHECK_FALSE(d.health.health);
}
