// Pairs send and receive halves into spans by (directed 4-tuple, first-byte sequence number).
//
// A send pairs with the receive whose byte range holds the send's first byte, however the
// stream was split or coalesced: a receive may complete several sends, and a send's later bytes
// may arrive in later receives. Halves arrive in any order (many CPUs, one ring buffer), so both
// sides wait in bounded, aged tables: a send until its receive appears, a receive for a short
// reorder allowance in case the send that starts inside it is still on its way.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

struct CorrelatorLimits {
  std::size_t max_pending = 1 << 18;             // sends + receives waiting, across all flows
  std::int64_t send_max_age_ns = 10'000'000'000;  // a message not received within this is unpaired
  std::int64_t recv_max_age_ns = 1'000'000'000;   // how late a send's half may reach the agent
};

struct CorrelatorCounters {
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
  std::uint64_t pairs = 0;
  std::uint64_t sends_expired = 0;         // no receive held its first byte within send_max_age
  std::uint64_t recvs_without_start = 0;   // expired with no send starting in it: the middle of a
                                           // larger send, or a sender that is not traced
  std::uint64_t dropped_table_full = 0;    // halves refused because max_pending was reached
  std::uint64_t duplicate_sends = 0;       // a second send claiming the same first byte (replaced)
};

class Correlator {
 public:
  explicit Correlator(CorrelatorLimits limits = {}) : limits_(limits) {}

  // Appends the spans this half completes to `out`.
  void add(const Half& half, std::vector<Span>& out);
  // Removes halves older than their age limit at true time now_ns (CLOCK_MONOTONIC).
  void expire(std::int64_t now_ns);

  std::size_t pending_sends() const { return pending_sends_; }
  std::size_t pending_recvs() const { return pending_recvs_; }
  std::size_t flows() const { return flows_.size(); }
  const CorrelatorCounters& counters() const { return counters_; }

 private:
  struct PendingRecv {
    Half half;
    std::uint64_t end;  // one past the last byte, unwrapped
    bool started_a_send = false;
  };
  struct FlowState {
    std::uint64_t last_seq = 0;            // unwrapped sequence number of the last half seen
    std::map<std::uint64_t, Half> sends;   // by unwrapped first-byte sequence number
    std::map<std::uint64_t, PendingRecv> recvs;
  };

  static std::uint64_t unwrap(FlowState& flow, std::uint32_t seq);
  void add_send(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out);
  void add_recv(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out);
  void emit(const Half& send, const Half& recv, std::vector<Span>& out);
  bool table_full() const { return pending_sends_ + pending_recvs_ >= limits_.max_pending; }

  CorrelatorLimits limits_;
  CorrelatorCounters counters_;
  std::unordered_map<FlowKey, FlowState, FlowKeyHash> flows_;
  std::size_t pending_sends_ = 0;
  std::size_t pending_recvs_ = 0;
};

}  // namespace skewscope
