// Pairs send and receive halves into spans by (directed 4-tuple, first-byte sequence number).
//
// A send pairs with the receive whose byte range holds the send's first byte, however the
// stream was split or coalesced: a receive may complete several sends, and a send's later bytes
// may arrive in later receives. Halves arrive in any order (many CPUs, one ring buffer), so both
// sides wait in bounded, aged tables: a send until its receive appears, a receive only until no
// send can still start in it (every byte of it belongs to a send already seen), or for a short
// reorder allowance when that cannot be known (a send missing or not traced).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

struct CorrelatorLimits {
  std::size_t max_pending = 1 << 18;              // sends + receives waiting, across all flows
  std::int64_t send_max_age_ns = 10'000'000'000;  // a message not received within this is unpaired
  std::int64_t recv_max_age_ns = 1'000'000'000;   // how late a send's half may reach the agent
};

struct CorrelatorCounters {
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
  std::uint64_t pairs = 0;
  std::uint64_t sends_expired = 0;        // no receive held its first byte within send_max_age
  std::uint64_t recvs_without_start = 0;  // left the table with no send starting in it: the
                                          // middle of a larger send, or a sender that is not traced
  std::uint64_t recvs_orphaned = 0;       // of those, the ones no send seen covers: they cannot
                                          // belong to any send (sender not traced, or its half lost)
  std::uint64_t dropped_table_full = 0;   // halves refused because max_pending was reached
  std::uint64_t duplicate_sends = 0;      // a second send claiming the same first byte (replaced)
};

// A half that left the tables unpaired (an aged-out send, an orphaned receive), for the pairing
// floor: its domain, and the address of its other end.
struct UnpairedHalf {
  HalfKind kind = HalfKind::send;
  DomainId domain = 0;
  Address peer{};
};

class Correlator {
 public:
  explicit Correlator(CorrelatorLimits limits = {}) : limits_(limits) {}

  // Appends the spans this half completes to `out`.
  void add(const Half& half, std::vector<Span>& out);
  // Removes halves older than their age limit at true time now_ns (CLOCK_MONOTONIC); appends the
  // sends that aged out and the receives orphaned to `unpaired`, when given.
  void expire(std::int64_t now_ns, std::vector<UnpairedHalf>* unpaired = nullptr);

  // Removes the flow `key` with every half still waiting in it, appended to `out` (its receives
  // as Transport::tcp). The exchange's owner re-keys a flow when a router's translation for it
  // arrives after its first halves did; nothing is counted here, the halves pair elsewhere.
  void take_flow(const FlowKey& key, std::vector<Half>& out);

  std::size_t pending_sends() const { return pending_sends_; }
  std::size_t pending_recvs() const { return pending_recvs_; }
  std::size_t flows() const { return flows_.size(); }
  const CorrelatorCounters& counters() const { return counters_; }

 private:
  // Only what a span needs: no copy of the flow key, which the flow already holds.
  struct PendingSend {
    std::uint64_t seq;  // unwrapped first-byte sequence number
    std::int64_t capture_ns;
    std::int64_t domain_ns;
    std::uint32_t bytes;
    DomainId domain;
    Transport transport;
  };
  struct PendingRecv {
    std::uint64_t seq;
    std::uint64_t end;  // one past the last byte, unwrapped
    std::int64_t capture_ns;
    std::int64_t domain_ns;
    DomainId domain;
    bool started_a_send;
  };

  // Entries sorted by seq in one vector, consumed from a moving head: halves mostly arrive in
  // sequence order, so inserts append and removals advance the head; no allocation per half.
  template <class T>
  struct SeqQueue {
    std::vector<T> items;
    std::size_t head = 0;
    bool empty() const { return head == items.size(); }
    T* begin() { return items.data() + head; }
    T* end() { return items.data() + items.size(); }
    T* lower_bound(std::uint64_t seq);  // first entry with seq >= `seq`
    T* insert(T* pos, const T& value);
    void erase(T* first, T* last);
    void pop_front() { erase(begin(), begin() + 1); }
  };

  struct FlowState {
    std::uint64_t last_seq = 0;  // unwrapped sequence number of the last half seen
    // Sends seen so far cover every byte of [covered_from, covered_to): no new send can start
    // there. A send beyond covered_to opens a gap; the nearest island of sends beyond it is kept
    // so that a late send filling the gap joins it. A gap older than the reorder allowance is
    // closed by time (its send is not coming).
    std::uint64_t covered_from = 0, covered_to = 0;
    std::uint64_t island_from = 0, island_to = 0;
    std::uint64_t furthest_send_end = 0;
    std::int64_t gap_since_ns = 0;  // capture time of the send that opened the gap, 0 if none
    SeqQueue<PendingSend> sends;
    SeqQueue<PendingRecv> recvs;
  };
  struct Flow {
    FlowKey key;
    std::uint64_t hash;
    FlowState state;
  };

  static std::uint64_t unwrap(FlowState& flow, std::uint32_t seq);
  static std::uint64_t hash_key(const FlowKey& key);
  FlowState& flow_of(const FlowKey& key);
  void remember_flow(std::size_t index);
  void erase_flow(std::size_t index);
  void rehash(std::size_t slots);
  void note_send(FlowState& flow, std::uint64_t seq, std::uint64_t end, std::int64_t capture_ns);
  // `orphans`: the receives released belong to no send seen (a gap closed by time); the flow's key
  // names their peer.
  struct Orphans {
    const FlowKey& flow;
    std::vector<UnpairedHalf>* out;
  };
  void release_covered(FlowState& flow, const Orphans* orphans = nullptr);
  void release_range(FlowState& flow, std::uint64_t from, std::uint64_t to, const Orphans* orphans);
  static bool covered(const FlowState& flow, std::uint64_t seq, std::uint64_t end);
  void add_send(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out);
  void add_recv(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out);
  void emit(const PendingSend& send, const PendingRecv& recv, std::vector<Span>& out);
  bool table_full() const { return pending_sends_ + pending_recvs_ >= limits_.max_pending; }

  CorrelatorLimits limits_;
  CorrelatorCounters counters_;
  // Flat flow table: flows in one dense vector (expire walks it linearly), found through an
  // open-addressing index of (hash, position + 1) with linear probing.
  struct Slot {
    std::uint32_t hash = 0;
    std::uint32_t position = 0;  // index into flows_ + 1; 0 = empty
  };
  std::vector<Flow> flows_;
  std::vector<Slot> slots_;
  // The flows of the last halves, the latest first: a message's send and receive halves share
  // their flow, a stream's halves come in runs of one flow, and a request/response connection's
  // alternate between its two directions (one CPU's ring holds the client's request sends and
  // reply receives); comparing keys is cheaper than hashing one (an eighth of the agent's samples
  // per TCP message went to finding the flow). Forgotten when flows move.
  std::array<std::size_t, 2> recent_flows_{SIZE_MAX, SIZE_MAX};
  std::size_t pending_sends_ = 0;
  std::size_t pending_recvs_ = 0;
};

}  // namespace skewscope
