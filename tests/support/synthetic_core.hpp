// An AgentCore over two synthetic domains, pre (client) and infer (server), and the pre -> infer
// traffic the tests that read its report feed it (tests/unit/runtime/capture_truth_test.cpp,
// tests/unit/client/evidence_test.cpp). Beside synthetic_halves.hpp rather than in it: that
// header is the records alone, which the capture and correlate tests and the benchmarks include
// without the core.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "core/agent_core.hpp"
#include "synthetic_halves.hpp"

namespace skewscope::test {

// The two domains' network namespaces: pre is 10.77.0.1, infer 10.77.0.2 (Endpoint's lab net).
constexpr std::uint32_t kPreNetns = 11, kInferNetns = 22;

// pre -> infer requests (100 bytes) and infer -> pre replies (30 bytes), 50 us one way, one
// request and its reply per ms from `start`; each direction's stream starts at its own sequence.
inline std::vector<skewscope_half_event> pre_infer_traffic(int messages, std::int64_t start,
                                                           std::uint32_t request_seq = 7,
                                                           std::uint32_t reply_seq = 90000) {
  constexpr std::int64_t kMs = 1'000'000;
  SyntheticStream request({1, 40000, kPreNetns}, {2, 5555, kInferNetns}, request_seq);
  SyntheticStream reply({2, 5555, kInferNetns}, {1, 40000, kPreNetns}, reply_seq);
  std::vector<skewscope_half_event> ev;
  for (int i = 0; i < messages; ++i) {
    const std::int64_t t = start + i * kMs;
    ev.push_back(request.write(100, t));
    ev.push_back(request.read(100, t + 50'000));
    ev.push_back(reply.write(30, t + 60'000));
    ev.push_back(reply.read(30, t + 110'000));
  }
  return ev;
}

// What a test changes of the core's configuration; the rest is AgentCoreConfig's default.
struct PreInferCoreSettings {
  std::int64_t window_ns = AgentCoreConfig{}.window_ns;
  std::size_t max_pending = CorrelatorLimits{}.max_pending;
  std::int64_t send_max_age_ns = CorrelatorLimits{}.send_max_age_ns;
};

// The core with the domains pre and infer declared by namespace, and only those kept
// (--only-domains): the host's own traffic is no pair.
inline AgentCore make_pre_infer_core(const PreInferCoreSettings& settings = {}) {
  DomainRegistry domains("host", true);
  REQUIRE(domains.add_netns("pre", kPreNetns));
  REQUIRE(domains.add_netns("infer", kInferNetns));
  AgentCoreConfig config;
  config.window_ns = settings.window_ns;
  config.limits.max_pending = settings.max_pending;
  config.limits.send_max_age_ns = settings.send_max_age_ns;
  return AgentCore(std::move(domains), config);
}

// Every event into the core, 64 at a time, as the capture loop hands it a ring buffer's batches.
inline void feed(AgentCore& core, const std::vector<skewscope_half_event>& events) {
  SyntheticSource source(events, 64);
  std::vector<skewscope_half_event> batch;
  while (source.poll(batch, std::chrono::milliseconds(0))) {
    core.ingest(batch);
    batch.clear();
  }
}

}  // namespace skewscope::test
