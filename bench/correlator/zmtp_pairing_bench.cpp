// The agent's side of message-level ZeroMQ spans, alone: AgentCore::ingest_payloads (decode,
// domain, ZMTP framing, message matching, health and estimate) fed with the payload records of
// one PUSH -> PULL stream, as the payload ring gives them: a sender's write, then the receiver's
// reads of the same bytes. items_per_second is messages a second on one core; its inverse is the
// agent's CPU per coalesced message that bench/end_to_end measures end to end.
//
//   BM_ZmtpCoalesced/SIZE/WRITE/READ   messages of SIZE body bytes, written WRITE bytes a call
//                                      (libzmq: 8192), read READ bytes a call; 16/18/18 is one
//                                      message per call (REQ/REP)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "capture/payload_source.hpp"
#include "core/agent_core.hpp"
#include "synthetic_traffic.hpp"
#include "zmtp_stream_bytes.hpp"

using namespace skewscope;
using namespace skewscope::bench;
using skewscope::test::zmtp_stream;

namespace {

constexpr int kMessages = 200'000;             // one stream: greeting, READY, then these messages
constexpr std::size_t kRecordsPerIngest = 64;  // records per ingest, a payload-ring pass's worth at this rate
constexpr std::uint64_t kOneWayNs = 20'000;

PayloadRecord record_of(const std::vector<std::uint8_t>& stream, std::size_t at, std::size_t n, bool send,
                        std::uint64_t ts) {
  PayloadRecord r;
  auto& h = r.header;
  h.ts_ns = ts;
  const std::uint8_t a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  const std::uint8_t b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  std::memcpy(h.local_addr, send ? a : b, 16);
  std::memcpy(h.remote_addr, send ? b : a, 16);
  h.local_port = send ? 40000 : 5555;
  h.remote_port = send ? 5555 : 40000;
  h.netns_ino = send ? kSenderNetns : kReceiverNetns;
  h.seq = 1000 + static_cast<std::uint32_t>(at);
  h.bytes = static_cast<std::uint32_t>(n);
  h.captured_len = static_cast<std::uint32_t>(n);
  h.kind = send ? SKEWSCOPE_HALF_SEND : SKEWSCOPE_HALF_RECV;
  h.protocol = SKEWSCOPE_PROTO_ZMTP;
  r.bytes.assign(stream.begin() + static_cast<long>(at), stream.begin() + static_cast<long>(at + n));
  return r;
}

// The stream's records in the ring's order (each write, then the reads that end within it), in
// the batches one ingest takes: cut once, outside the timing, which then holds only the ingests.
std::vector<std::vector<PayloadRecord>> ring_batches(std::size_t size, std::size_t write, std::size_t read) {
  const auto stream = zmtp_stream(kMessages, size);
  std::vector<PayloadRecord> out;
  std::size_t written = 0, read_to = 0;
  std::uint64_t t = 1'000'000'000;
  while (written < stream.size()) {
    const std::size_t n = std::min(write, stream.size() - written);
    out.push_back(record_of(stream, written, n, true, t));
    written += n;
    while (read_to < written) {
      const std::size_t m = std::min(read, written - read_to);
      out.push_back(record_of(stream, read_to, m, false, t + kOneWayNs));
      read_to += m;
    }
    t += 2'000;
  }
  std::vector<std::vector<PayloadRecord>> batches;
  for (std::size_t i = 0; i < out.size(); i += kRecordsPerIngest)
    batches.emplace_back(out.begin() + static_cast<long>(i),
                         out.begin() + static_cast<long>(std::min(out.size(), i + kRecordsPerIngest)));
  return batches;
}

AgentCore make_payload_core() {
  DomainRegistry domains("host", true);
  domains.add_netns("a", kSenderNetns);
  domains.add_netns("b", kReceiverNetns);
  AgentCore core(std::move(domains), AgentCoreConfig{});
  core.enable_payload(8192, MessagePairingLimits{});
  return core;
}

void BM_ZmtpCoalesced(benchmark::State& state) {
  const auto batches = ring_batches(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)),
                                    static_cast<std::size_t>(state.range(2)));
  std::int64_t messages = 0;
  for (auto _ : state) {
    state.PauseTiming();
    AgentCore core = make_payload_core();
    state.ResumeTiming();
    for (const auto& batch : batches) core.ingest_payloads(batch);
    state.PauseTiming();
    const auto report = core.report(2'000'000'000);
    if (!report.payload || report.payload->pairing.zmtp_pairs != static_cast<std::uint64_t>(kMessages))
      state.SkipWithError("not every message paired: the bench's stream is wrong");
    messages += kMessages;
    state.ResumeTiming();
  }
  state.SetItemsProcessed(messages);
}
BENCHMARK(BM_ZmtpCoalesced)
    ->Args({64, 8192, 8192})
    ->Args({64, 8192, 1500})
    ->Args({8, 8192, 8192})
    ->Args({16, 18, 18})
    ->Unit(benchmark::kMillisecond);

}  // namespace
