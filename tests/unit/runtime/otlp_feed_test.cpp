#include "runtime/otlp_feed.hpp"

#include <doctest/doctest.h>

#include "api/status_json.hpp"
#include "synthetic_halves.hpp"

using namespace skewscope;
using namespace skewscope::test;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::uint32_t kPreNetns = 11, kInferNetns = 22;

AgentCore make_core() {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("pre", kPreNetns));
  REQUIRE(domains.add_netns("infer", kInferNetns));
  return AgentCore(std::move(domains), AgentCoreConfig{});
}

// `messages` requests pre -> infer, 50 us one-way, from true time `t`.
void send_requests(AgentCore& core, SyntheticStream& stream, int messages, std::int64_t& t) {
  std::vector<skewscope_half_event> batch;
  for (int i = 0; i < messages; ++i) {
    batch.push_back(stream.write(100, t));
    batch.push_back(stream.read(100, t + 50'000));
    t += kMs;
  }
  core.ingest(batch);
}

}  // namespace

TEST_CASE("the feed reads each paired span once, with its raw times and its pair's names") {
  auto core = make_core();
  SyntheticStream stream({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  std::int64_t t = 1'000 * kMs;
  OtlpFeed feed;
  CHECK(feed.read_new(core, t).empty());
  send_requests(core, stream, 30, t);
  auto first = feed.read_new(core, t);
  REQUIRE(first.size() == 30);
  const auto& recent = core.recent_spans();
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].span.send_ns == recent[i].span.send_ns);
    CHECK(first[i].span.recv_ns == recent[i].span.recv_ns);
    CHECK(first[i].src == "pre");
    CHECK(first[i].dst == "infer");
    CHECK(first[i].span.span_ns() == 50'000);
    CHECK_FALSE(first[i].corrected.corrected);  // one-way traffic: no settled two-sided interval
    CHECK_FALSE(first[i].offset_ns);
  }
  CHECK(feed.read_new(core, t).empty());
  send_requests(core, stream, 5, t);
  CHECK(feed.read_new(core, t).size() == 5);
  CHECK(feed.take_missed() == 0);
}

TEST_CASE("more spans than the ring holds between two reads: the rest is counted as missed") {
  auto core = make_core();
  SyntheticStream stream({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  std::int64_t t = 1'000 * kMs;
  OtlpFeed feed;
  send_requests(core, stream, static_cast<int>(AgentCore::kRecentSpans) + 300, t);
  auto spans = feed.read_new(core, t);
  CHECK(spans.size() == AgentCore::kRecentSpans);
  CHECK(feed.take_missed() == 300);
  CHECK(feed.take_missed() == 0);
}

TEST_CASE("a simulated clock error: the spans are negative and their pair's state says so") {
  auto core = make_core();
  core.simulated_clocks().set(*core.domains().find("infer"), -5 * kMs, 0, 0);
  SyntheticStream stream({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  std::int64_t t = 1'000 * kMs;
  OtlpFeed feed;
  send_requests(core, stream, 20, t);
  auto spans = feed.read_new(core, t);
  REQUIRE(spans.size() == 20);
  for (const auto& s : spans) {
    CHECK(s.span.span_ns() < 0);
    CHECK(s.state == PairState::violated);
  }
}

TEST_CASE("each span's trust comes from the policies, asked once per pair and transport of a batch") {
  auto core = make_core();
  SyntheticStream stream({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  std::int64_t t = 1'000 * kMs;
  send_requests(core, stream, 5, t);
  OtlpFeed feed;
  auto spans = feed.read_new(core, t);
  REQUIRE(spans.size() == 5);
  int asked = 0;
  apply_span_trust(spans, [&asked](const std::string& src, const std::string& dst, Transport transport) {
    ++asked;
    return src == "pre" && dst == "infer" && transport == Transport::tcp ? std::optional<bool>(false) : std::nullopt;
  });
  CHECK(asked == 1);
  for (const auto& s : spans) CHECK(s.trusted == std::optional<bool>(false));
  apply_span_trust(spans, [](const std::string&, const std::string&, Transport) { return std::optional<bool>(); });
  for (const auto& s : spans) CHECK_FALSE(s.trusted.has_value());
  apply_span_trust(spans, {});  // no --policy-file: nothing asked, nothing set
  for (const auto& s : spans) CHECK_FALSE(s.trusted.has_value());
}

TEST_CASE("a TCP span carries its flow, sender's socket -> receiver's, to the exporter") {
  auto core = make_core();
  SyntheticStream stream({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  std::int64_t t = 1'000 * kMs;
  send_requests(core, stream, 3, t);
  OtlpFeed feed;
  auto spans = feed.read_new(core, t);
  REQUIRE(spans.size() == 3);
  for (const auto& s : spans) {
    REQUIRE(s.socket.has_value());
    CHECK(otlp::address_text(s.socket->src_addr) == "10.77.0.1");
    CHECK(s.socket->src_port == 40000);
    CHECK(otlp::address_text(s.socket->dst_addr) == "10.77.0.2");
    CHECK(s.socket->dst_port == 5555);
  }
}

TEST_CASE("the metrics snapshot carries each pair's values exactly as the status JSON shows them") {
  auto core = make_core();
  core.simulated_clocks().set(*core.domains().find("infer"), 20'000, 0, 0);  // 20 us ahead
  SyntheticStream there({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 7);
  SyntheticStream back({2, 5555, kInferNetns}, {1, 40000, kPreNetns}, 9);
  std::int64_t t = 1'000 * kMs;
  for (int i = 0; i < 4000; ++i) {  // 4 s of requests and replies: the interval settles
    std::vector<skewscope_half_event> batch{there.write(100, t), there.read(100, t + 50'000),
                                            back.write(100, t + 60'000), back.read(100, t + 110'000)};
    core.ingest(batch);
    t += kMs;
    if (i % 100 == 0) core.tick(t);
  }
  core.tick(t);
  const AgentReport report = core.report(t);
  const auto snapshot = metrics_snapshot(report, 42);
  const auto status = status_json(report);
  REQUIRE(snapshot.pairs.size() == status["pairs"].size());
  REQUIRE_FALSE(snapshot.pairs.empty());
  CHECK(snapshot.time_unix_nano == 42);
  bool some_offset = false;
  for (std::size_t i = 0; i < snapshot.pairs.size(); ++i) {
    const auto& g = snapshot.pairs[i];
    const auto& j = status["pairs"][i];
    CHECK(g.src == j["src"]);
    CHECK(g.dst == j["dst"]);
    CHECK(transport_name(g.transport) == j["transport"]);
    CHECK(pair_state_name(g.state) == j["state"]);
    CHECK((g.health ? nlohmann::json(*g.health) : nlohmann::json(nullptr)) == j["health"]);
    auto same = [](const std::optional<double>& v, const nlohmann::json& field) {
      return v ? field.is_number() && field.get<double>() == *v : field.is_null();
    };
    CHECK(same(g.offset_s, j["offset_seconds"]));
    CHECK(same(g.offset_bound_s, j["offset_bound_seconds"]));
    CHECK(same(g.delta_t_min_s, j.value("delta_t_min_seconds", nlohmann::json(nullptr))));
    some_offset = some_offset || g.offset_s.has_value();
  }
  CHECK(some_offset);  // two-way traffic settles an interval: the comparison saw real values
}
