// Pairs RDMA RC send and receive halves into spans by (sender QPN, receiver QPN, message ordinal).
//
// An RC queue pair delivers in order and each message that carries data to the peer's receive
// queue (SEND, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM) consumes exactly one receive: the k-th such
// WR posted on QP a is the k-th successful receive completion on its peer QP b. The kernel side
// counts both from 0 at the QP's move to RTR; the peer QPN comes from that same modify_qp (on
// real RC hardware a receive completion's src_qp is not filled in). Halves arrive in any order,
// so both sides wait in bounded, aged tables, as TCP halves do.
//
// A QP's numbers are reused once it is destroyed: a new RTR (or QP creation) on a local endpoint
// retires every half still waiting from its previous connection, so a recycled QPN never pairs
// with a stale half.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/span.hpp"

namespace skewscope {

// One local QP, as the capture sees it: (domain, process, QPN).
struct RdmaEndpoint {
  DomainId domain = 0;
  std::uint32_t pid = 0;
  std::uint32_t qpn = 0;
  auto operator<=>(const RdmaEndpoint&) const = default;
};

struct RdmaHalf {
  HalfKind kind = HalfKind::send;
  RdmaEndpoint local;
  std::uint64_t ordinal = 0;
  std::uint32_t bytes = 0;
  std::int64_t capture_ns = 0;  // CLOCK_MONOTONIC at capture
  std::int64_t domain_ns = 0;   // the domain's wall clock
};

// What the RTR of a local QP said: its peer, and the connection's own GID when it could be read.
struct RdmaConnection {
  std::uint32_t peer_qpn = 0;
  Address peer_gid{};
  std::optional<Address> local_gid;  // the GID-table entry the QP sends from (not always known)
  std::uint64_t generation = 0;      // identifies the RTR (its capture time): a new one restarts ordinals
};

struct RdmaPairingLimits {
  std::size_t max_pending = 1 << 18;
  std::int64_t send_max_age_ns = 10'000'000'000;
  std::int64_t recv_max_age_ns = 10'000'000'000;  // a receive waits as long: the send may come late
  std::size_t max_connections = 1 << 16;
};

struct RdmaPairingCounters {
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
  std::uint64_t pairs = 0;
  std::uint64_t connects = 0;
  std::uint64_t untracked_connects = 0;  // RTR before the provider's functions were probed
  std::uint64_t no_connection = 0;       // a half on a QP whose RTR was not seen: cannot be keyed
  std::uint64_t sends_expired = 0;
  std::uint64_t recvs_expired = 0;
  std::uint64_t superseded = 0;          // waiting halves of a QP that was reconnected or recreated
  std::uint64_t duplicates = 0;          // a second half with the same key (replaced)
  std::uint64_t dropped_table_full = 0;  // halves or connections refused at a bound
};

class RdmaPairing {
 public:
  explicit RdmaPairing(RdmaPairingLimits limits = {}) : limits_(limits) {}

  // The local QP moved to RTR towards (peer_qpn, peer GID): its ordinals restart at 0.
  // Untracked (the capture could not see all of its messages): forgotten, counted.
  void connect(const RdmaEndpoint& local, std::uint32_t peer_qpn, const Address& peer_gid, bool tracked = true);
  void connect(const RdmaEndpoint& local, const RdmaConnection& connection, bool tracked);
  // For halves that carry their connection (the exchange's owner): connects only when the
  // endpoint's connection is unknown or is another RTR (generation or peer changed).
  void connect_if_new(const RdmaEndpoint& local, const RdmaConnection& connection);
  // A QP was created with this number: whatever was known of an earlier QP with it is gone.
  void qp_created(const RdmaEndpoint& local);
  // Appends the span this half completes, if any.
  void add(const RdmaHalf& half, std::vector<Span>& out);
  void expire(std::int64_t now_ns);

  std::size_t pending_sends() const { return sends_.size(); }
  std::size_t pending_recvs() const { return recvs_.size(); }
  const RdmaPairingCounters& counters() const { return counters_; }
  // The peer GID a local QP was connected to (the peer host's address on RoCEv2), for the
  // exchange's key; nullptr when its RTR was not seen.
  const Address* peer_gid(const RdmaEndpoint& local) const;
  const RdmaConnection* connection(const RdmaEndpoint& local) const;

 private:
  using Connection = RdmaConnection;
  // (sender QPN, receiver QPN, ordinal)
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>;
  struct Waiting {
    RdmaHalf half;
  };

  void retire(const RdmaEndpoint& local);
  void emit(const RdmaHalf& send, const RdmaHalf& recv, std::vector<Span>& out);

  RdmaPairingLimits limits_;
  RdmaPairingCounters counters_;
  std::map<RdmaEndpoint, Connection> connections_;
  std::map<Key, Waiting> sends_;
  std::map<Key, Waiting> recvs_;
};

}  // namespace skewscope
