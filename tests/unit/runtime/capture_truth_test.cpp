// Health 1 is only claimed when the capture saw everything: a dead capture, or halves lost in the
// window, turn what was not seen into `unknown` (health null), never into 1.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>

#include "api/agent_metrics.hpp"
#include "api/status_json.hpp"
#include "client/status_table.hpp"
#include "core/agent_core.hpp"
#include "health/health_tracker.hpp"
#include "runtime/capture_loop.hpp"
#include "synthetic_core.hpp"

using namespace skewscope;
using namespace skewscope::test;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSecond = 1'000 * kMs;

const PairReport& pair(const AgentReport& r, const std::string& src, const std::string& dst) {
  for (const auto& p : r.health.pairs)
    if (r.name(p.key.src) == src && r.name(p.key.dst) == dst) return p;
  FAIL("no pair " << src << " -> " << dst);
  throw 0;
}

// Delivers its events, then fails the way the ring buffer reader can (an epoll error).
class FailingSource final : public EventSource {
 public:
  explicit FailingSource(std::vector<skewscope_half_event> events) : inner_(std::move(events), 64) {}
  bool poll(std::vector<skewscope_half_event>& out, std::chrono::milliseconds timeout) override {
    ++polls_;
    return inner_.poll(out, timeout);
  }
  SourceCounters counters() const override {
    SourceCounters c = inner_.counters();
    c.ringbuf_full = 0;
    return c;
  }
  std::string error() const override { return "reading the BPF ring buffer failed: Bad file descriptor"; }
  int polls() const { return polls_; }

 private:
  SyntheticSource inner_;
  int polls_ = 0;
};

// Never fails; asks the loop to stop after `polls` polls.
class StoppingSource final : public EventSource {
 public:
  StoppingSource(std::atomic<bool>& stopping, int polls) : stopping_(stopping), left_(polls) {}
  bool poll(std::vector<skewscope_half_event>&, std::chrono::milliseconds) override {
    if (--left_ <= 0) stopping_ = true;
    return true;
  }
  SourceCounters counters() const override { return {}; }

 private:
  std::atomic<bool>& stopping_;
  int left_;
};

}  // namespace

TEST_CASE("the capture loop: a failing source turns every pair and the overall health unknown") {
  SharedCore shared(make_pre_infer_core());
  std::atomic<bool> stopping{false};
  FailingSource source(pre_infer_traffic(100, kSecond));
  Status end = run_capture_loop(source, shared, stopping, 8192);
  auto core = shared.lock();
  CHECK_FALSE(end);
  CHECK(end.error == "reading the BPF ring buffer failed: Bad file descriptor");
  CHECK(source.polls() > 1);
  CHECK_FALSE(core->capture_up());

  // Before the failure the same traffic is healthy: what changed is only that the capture died.
  const std::int64_t now = kSecond + 200 * kMs;
  AgentReport r = core->report(now);
  CHECK(r.correlator.pairs == 200);  // everything delivered before the failure was taken in
  CHECK_FALSE(r.health.capture_up);
  CHECK_FALSE(r.health.health.has_value());
  REQUIRE(r.health.pairs.size() == 2);
  for (const auto& p : r.health.pairs) {
    CHECK(p.state == PairState::unknown);
    CHECK_FALSE(p.health.has_value());
    CHECK_FALSE(p.capture_complete);
  }
  CHECK(r.capture_error == end.error);

  auto j = status_json(r);
  CHECK(j["health"].is_null());
  CHECK(j["capture"]["up"] == false);
  CHECK(j["capture"]["error"] == end.error);
  CHECK(j["pairs"][0]["health"].is_null());
  CHECK(j["pairs"][0]["state"] == "unknown");
  CHECK(j["pairs"][0]["capture_complete"] == false);
  CHECK(render_status_table(j).find("causality_health ?") != std::string::npos);

  std::string m = render_agent_metrics(r, "test");
  CHECK(m.find("skewscope_capture_up 0\n") != std::string::npos);
  CHECK(m.find("\nskewscope_causality_health ") == std::string::npos);  // no sample: cannot know
  CHECK(m.find("\nskewscope_pair_causality_health{") == std::string::npos);
  CHECK(m.find("skewscope_pair_capture_complete{src=\"pre\",dst=\"infer\"} 0\n") != std::string::npos);
}

TEST_CASE("the capture loop: a violation seen before the capture died is still reported unknown") {
  // Once down, the agent says nothing certain about any pair: it is about to exit.
  SharedCore shared(make_pre_infer_core());
  {
    auto setup = shared.lock();
    setup->simulated_clocks().set(*setup->domains().find("infer"), -5 * kMs, 0, 0);
  }
  std::atomic<bool> stopping{false};
  FailingSource source(pre_infer_traffic(10, kSecond));
  CHECK_FALSE(run_capture_loop(source, shared, stopping, 8192));
  auto core = shared.lock();
  auto r = core->report(kSecond + 20 * kMs);
  CHECK(pair(r, "pre", "infer").window.negative_spans == 10);
  CHECK(pair(r, "pre", "infer").state == PairState::unknown);
  CHECK_FALSE(r.health.health.has_value());
}

TEST_CASE("the capture loop: stopping is not a failure and leaves the capture up") {
  SharedCore shared(make_pre_infer_core());
  std::atomic<bool> stopping{false};
  StoppingSource source(stopping, 3);
  Status end = run_capture_loop(source, shared, stopping, 8192);
  auto core = shared.lock();
  CHECK(end);
  CHECK(core->capture_up());
  // Up, but no traffic yet: nothing vouches for health 1.
  CHECK_FALSE(core->report(0).health.health.has_value());
  std::string m = render_agent_metrics(core->report(0), "test");
  CHECK(m.find("skewscope_capture_up 1\n") != std::string::npos);
  CHECK(m.find("\nskewscope_causality_health ") == std::string::npos);
  CHECK(m.find("skewscope_health_unknown{reason=\"no_pair_known\"} 1\n") != std::string::npos);
}

TEST_CASE("halves lost in the window: no pair is healthy with certainty until the losses leave it") {
  auto core = make_pre_infer_core({.window_ns = 2 * kSecond});
  feed(core, pre_infer_traffic(100, kSecond));
  core.observe_source(kSecond + 50 * kMs, {});
  auto before = core.report(kSecond + 100 * kMs);
  CHECK(before.health.health == 1);
  CHECK(pair(before, "pre", "infer").state == PairState::ok);
  CHECK(pair(before, "pre", "infer").capture_complete);

  SourceCounters lost;
  lost.ringbuf_full = 40;
  lost.inflight_full = 2;
  core.observe_source(kSecond + 150 * kMs, lost);
  auto during = core.report(kSecond + 200 * kMs);
  CHECK_FALSE(during.health.health.has_value());
  CHECK(during.health.window_lost_halves == 42);
  for (const auto& p : during.health.pairs) {
    CHECK(p.state == PairState::unknown);
    CHECK_FALSE(p.health.has_value());
    CHECK(p.window_lost_halves == 42);
    CHECK_FALSE(p.capture_complete);
  }
  auto j = status_json(during);
  CHECK(j["health"].is_null());
  CHECK(j["capture"]["up"] == true);
  CHECK(j["capture"]["window_lost_halves"] == 42);
  CHECK(j["pairs"][0]["window_lost_halves"] == 42);
  std::string m = render_agent_metrics(during, "test");
  CHECK(m.find("skewscope_pair_capture_complete{src=\"pre\",dst=\"infer\"} 0\n") != std::string::npos);
  CHECK(m.find("skewscope_window_lost_halves 42\n") != std::string::npos);
  CHECK(m.find("\nskewscope_pair_causality_health{") == std::string::npos);

  // The same counters read again are not new losses; after the window has passed and new
  // traffic came in, the pairs are certain again.
  core.observe_source(kSecond + 900 * kMs, lost);
  CHECK(core.report(kSecond + 900 * kMs).health.window_lost_halves == 42);
  feed(core, pre_infer_traffic(100, 4 * kSecond, 500'000, 590'000));
  core.observe_source(4 * kSecond + 100 * kMs, lost);
  auto after = core.report(4 * kSecond + 200 * kMs);
  CHECK(after.health.window_lost_halves == 0);
  CHECK(after.health.health == 1);
  CHECK(pair(after, "pre", "infer").state == PairState::ok);
  CHECK(pair(after, "pre", "infer").health == 1);
}

TEST_CASE("halves lost in the window: a violation seen is still certain") {
  auto core = make_pre_infer_core({.window_ns = 2 * kSecond});
  core.simulated_clocks().set(*core.domains().find("infer"), -5 * kMs, 0, 0);
  feed(core, pre_infer_traffic(50, kSecond));
  SourceCounters lost;
  lost.ringbuf_full = 1;
  core.observe_source(kSecond + 100 * kMs, lost);
  auto r = core.report(kSecond + 100 * kMs);
  CHECK(r.health.health == 0);
  CHECK(pair(r, "pre", "infer").state == PairState::violated);
  CHECK(pair(r, "pre", "infer").health == 0);
  CHECK(pair(r, "infer", "pre").state == PairState::unknown);  // no inversion seen, but halves lost
  CHECK_FALSE(pair(r, "infer", "pre").health.has_value());
  std::string m = render_agent_metrics(r, "test");
  CHECK(m.find("skewscope_causality_health 0\n") != std::string::npos);
  CHECK(m.find("skewscope_pair_causality_health{src=\"pre\",dst=\"infer\"} 0\n") != std::string::npos);
  CHECK(m.find("skewscope_pair_causality_health{src=\"infer\",dst=\"pre\"}") == std::string::npos);
}

TEST_CASE("halves refused by a full pending table count as losses in the window") {
  auto core = make_pre_infer_core({.window_ns = 2 * kSecond, .max_pending = 4});
  // Sends only: the pending table (4) overflows after the first four.
  SyntheticStream s({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, 1);
  std::vector<skewscope_half_event> sends;
  for (int i = 0; i < 10; ++i) sends.push_back(s.write(10, kSecond + i * kMs));
  feed(core, sends);
  core.observe_source(kSecond + 100 * kMs, {});
  auto r = core.report(kSecond + 100 * kMs);
  CHECK(r.correlator.dropped_table_full == 6);
  CHECK(r.health.window_lost_halves == 6);
  CHECK_FALSE(r.health.health.has_value());
  CHECK(total_lost(r) == 6);
}

TEST_CASE("the health rules with the capture's coverage") {
  WindowTotals empty, clean{10, 0, 5, {}}, bad{10, 1, -5, {}};
  const CaptureCoverage full{true, true}, lossy{true, false}, down{false, false};
  CHECK(decide_state(clean, false, full) == PairState::ok);
  CHECK(decide_state(clean, true, full) == PairState::at_risk);
  CHECK(decide_state(clean, false, lossy) == PairState::unknown);
  CHECK(decide_state(clean, true, lossy) == PairState::unknown);
  CHECK(decide_state(bad, false, lossy) == PairState::violated);
  CHECK(decide_state(bad, false, down) == PairState::unknown);
  CHECK(decide_state(empty, false, full) == PairState::unknown);
  CHECK(decide_health(clean, full) == 1);
  CHECK_FALSE(decide_health(empty, full).has_value());  // no span in the window: no evidence
  CHECK_FALSE(decide_health(clean, lossy).has_value());
  CHECK(decide_health(bad, lossy) == 0);
  CHECK_FALSE(decide_health(bad, down).has_value());
}

TEST_CASE("a loss stays in the window as long as a span noticed at the same time would") {
  LossWindow w(kSecond, 30);
  w.add(5 * kSecond + 300 * kMs, 7);
  w.add(6 * kSecond, 0);  // nothing lost: no mark
  CHECK(w.in_window(5 * kSecond) == 7);
  CHECK(w.in_window(34 * kSecond + 999 * kMs) == 7);
  CHECK(w.in_window(35 * kSecond) == 0);
  w.add(40 * kSecond, 1);
  w.add(40 * kSecond + 10, 2);
  CHECK(w.in_window(41 * kSecond) == 3);
}

TEST_CASE("last_span_age_seconds: since the pair's newest span, kept once the window is empty") {
  HealthTracker tracker(30 * kSecond);
  Span s;
  s.src = 1;
  s.dst = 2;
  s.recv_ns = 10;
  s.capture_ns = 2 * kSecond;
  tracker.add(s);
  s.capture_ns = kSecond;  // older, arriving later
  tracker.add(s);
  auto r = tracker.report(4 * kSecond + 500 * kMs);
  REQUIRE(r.pairs.size() == 1);
  CHECK(*r.pairs[0].last_span_age_ns == 2 * kSecond + 500 * kMs);
  AgentReport report;
  report.domain_names = {"host", "pre", "infer"};
  report.health = r;
  CHECK(status_json(report)["pairs"][0]["last_span_age_seconds"].get<double>() == doctest::Approx(2.5));
  report.health = tracker.report(100 * kSecond);  // both spans have left the window: silent for 98 s
  CHECK(*report.health.pairs[0].last_span_age_ns == 98 * kSecond);
  CHECK(status_json(report)["pairs"][0]["last_span_age_seconds"].get<double>() == doctest::Approx(98));
  CHECK(status_json(report)["pairs"][0]["health"].is_null());
}

TEST_CASE("/metrics per (src,dst) over transports: a violation wins, then unknown, then 1") {
  auto report_with = [](std::optional<int> tcp, std::optional<int> zmq) {
    AgentReport r;
    r.domain_names = {"host", "pre", "infer"};
    for (auto [transport, health] : {std::pair{Transport::tcp, tcp}, std::pair{Transport::zmq, zmq}}) {
      PairReport p;
      p.key = {1, 2, transport};
      p.health = health;
      p.unknown_reason = health ? UnknownReason::none : UnknownReason::halves_lost;
      p.capture_complete = health.has_value();
      r.health.pairs.push_back(p);
    }
    return render_agent_metrics(r, "test");
  };
  const std::string sample = "skewscope_pair_causality_health{src=\"pre\",dst=\"infer\"} ";
  CHECK(report_with(0, std::nullopt).find(sample + "0\n") != std::string::npos);
  CHECK(report_with(1, std::nullopt).find(sample) == std::string::npos);
  CHECK(report_with(1, 1).find(sample + "1\n") != std::string::npos);
  CHECK(report_with(std::nullopt, 0).find(sample + "0\n") != std::string::npos);
  // A transport whose window holds no span has no say: the other one's evidence decides.
  AgentReport r;
  r.domain_names = {"host", "pre", "infer"};
  for (auto transport : {Transport::tcp, Transport::zmq}) {
    PairReport p;
    p.key = {1, 2, transport};
    p.health = transport == Transport::tcp ? std::optional<int>(1) : std::nullopt;
    p.unknown_reason = transport == Transport::tcp ? UnknownReason::none : UnknownReason::no_spans;
    r.health.pairs.push_back(p);
  }
  CHECK(render_agent_metrics(r, "test").find(sample + "1\n") != std::string::npos);
  r.health.pairs[0].health = std::nullopt;  // both silent: nothing vouches for the pair
  r.health.pairs[0].unknown_reason = UnknownReason::no_spans;
  CHECK(render_agent_metrics(r, "test").find(sample) == std::string::npos);
}
