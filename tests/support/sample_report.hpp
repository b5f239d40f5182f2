// A hand-made report with one violated pair (pre -> in"fer, whose name needs escaping), a few
// events and ring-buffer losses: the input of the renderings' contract tests, the api's (status
// JSON, /metrics) and the client's (the status table it prints from that JSON).
#pragma once

#include "core/agent_report.hpp"

namespace skewscope::test {

inline AgentReport sample_report() {
  AgentReport r;
  r.domain_names = {"host", "pre", "in\"fer"};
  r.health.window_ns = 30'000'000'000;
  r.health.health = 0;
  PairReport p;
  p.key = {1, 2, Transport::tcp};
  p.spans = 10;
  p.negative_spans = 4;
  p.window = {8, 4, -2'000'000, {}};
  p.negative_span_ratio = 0.5;
  p.health = 0;
  p.state = PairState::violated;
  r.health.pairs.push_back(p);
  r.ingest.sends = 10;
  r.ingest.recvs = 12;
  r.source.ringbuf_full = 3;
  r.correlator.pairs = 10;
  return r;
}

}  // namespace skewscope::test
