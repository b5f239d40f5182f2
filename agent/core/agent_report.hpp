// Everything the outputs (/metrics, /api/v1/status, CLI) show, taken at one instant under the
// agent's lock, so a scrape never sees a half-updated family.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "capture/event_source.hpp"
#include "capture/family_status.hpp"
#include "capture/half_decode.hpp"
#include "capture/payload_decode.hpp"
#include "capture/payload_source.hpp"
#include "capture/rdma_source.hpp"
#include "clocks/clock_snapshot.hpp"
#include "correlate/correlator.hpp"
#include "correlate/message_pairing.hpp"
#include "correlate/rdma_pairing.hpp"
#include "diagnose/diagnosis.hpp"
#include "estimate/estimator.hpp"
#include "estimate/triangles.hpp"
#include "exchange/exchange_report.hpp"
#include "health/health_tracker.hpp"
#include "health/level_health.hpp"
#include "otlp/otlp_report.hpp"
#include "translate/conntrack_watch.hpp"
#include "translate/nat_table.hpp"

namespace skewscope::exchange {
struct RemoteResults;
}

namespace skewscope {

struct IngestCounters {
  std::uint64_t records = 0;  // every record read from the source, whatever became of it
  std::uint64_t sends = 0;
  std::uint64_t recvs = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(DecodeReject::count_)> rejected{};
  std::uint64_t outside_domains = 0;  // --only-domains: not in any declared domain
  std::uint64_t own_traffic = 0;      // clients talking to this agent's HTTP port
};

// What each domain's clock is said to be: the host's clock sources (every domain on one kernel
// shares them) and, in the lab, the error the agent simulates for it (which no source can see).
struct DomainClock {
  std::optional<std::int64_t> error_bound_ns;
  std::optional<std::int64_t> simulated_offset_ns;
  double simulated_drift_ppm = 0;
};

// Halves lost for any counted reason: what `capture.lost` reports, and what marks a health window
// incomplete. Decode rejects are not in it: a record without a port or bytes could not have
// paired with anything.
inline std::uint64_t lost_halves(const SourceCounters& s, const CorrelatorCounters& c) {
  return s.ringbuf_full + s.inflight_full + s.malformed_records + c.dropped_table_full;
}

// Halves lost in the kernel for one domain (or outside every domain), by reason.
struct DomainLoss {
  std::optional<DomainId> domain;  // nullopt: outside every declared domain (--only-domains)
  bool ring_buffer_full = false;   // else: in-flight table full
  std::uint64_t count = 0;
};

// Payload capture (--payload-bytes): the kernel side's counters, what the agent did with the
// records, and the message-level pairing of Kafka batches and ZMTP messages.
struct PayloadReport {
  std::uint32_t max_bytes = 0;  // --payload-bytes
  PayloadCounters source;
  std::uint64_t records = 0;  // records read
  std::array<std::uint64_t, static_cast<std::size_t>(PayloadReject::count_)> rejected{};
  std::uint64_t outside_domains = 0;
  MessagePairingCounters pairing;
  std::size_t pending = 0;
};

// RDMA verbs capture (--rdma): the capture's counters and the pairing's.
struct RdmaReport {
  RdmaSourceCounters source;
  RdmaPairingCounters pairing;
  std::uint64_t outside_domains = 0;  // records of no declared domain (--only-domains)
  std::size_t pending_sends = 0;
  std::size_t pending_recvs = 0;
  // With --exchange: halves shipped to the owner of their host pair, halves that could not be
  // keyed (no local GID), and the RDMA pairing of the partitions this agent owns.
  struct Exchange {
    std::uint64_t shipped = 0;
    std::uint64_t no_local_gid = 0;
    RdmaPairingCounters owner;
  };
  std::optional<Exchange> exchange;
};

// Address translation (--nat-conntrack): the namespaces whose conntrack is read, what their
// sockets delivered, and the mappings that turn a half's key into the one its other end sees.
struct NatReport {
  translate::ConntrackWatchReport watch;
  translate::NatCounters table;
  std::size_t mappings = 0;
};

struct AgentReport {
  HealthReport health;
  // The pairing floor (health.pairing holds each local domain's halves in the window), and the
  // addresses known to be some captured half's own: an unpaired half counts only if its peer is one.
  PairingFloor pairing_floor;
  std::size_t captured_addresses = 0;
  std::uint64_t addresses_not_learned = 0;  // the set was full (CapturedAddresses::kMaxAddresses)
  std::vector<DomainLoss> domain_losses;
  std::vector<std::string> domain_names;  // indexed by DomainId
  SourceCounters source;
  std::optional<std::string> capture_error;  // why the capture is down; null while it is up
  IngestCounters ingest;
  CorrelatorCounters correlator;
  std::size_t pending_sends = 0;
  std::size_t pending_recvs = 0;
  clocks::ClockSnapshot clocks;
  MonotonicToRealtime::Stats realtime_mapping;       // the core's: every half's wall-clock time
  std::optional<std::uint64_t> clock_steps_watched;  // steps the clock-step watch woke for; null: not running
  std::vector<estimate::PairEstimate> estimates;     // one per directed pair with traffic in the window
  estimate::Counters estimate_counters;
  estimate::TriangleReport triangles;
  std::vector<DomainClock> domain_clocks;            // indexed by DomainId
  std::optional<exchange::ExchangeReport> exchange;  // only with --exchange
  std::optional<PayloadReport> payload;              // only with --payload-bytes
  WireReport wire;                    // --wire-timestamps: the wire levels of each pair (enabled false without it)
  std::optional<RdmaReport> rdma;     // only with --rdma
  FamilyStatuses capture_families{};  // which capture families run, with which candidate, or why not
  std::optional<NatReport> nat;       // only with --nat-conntrack
  // Only with --otlp-endpoint: the exporter's counters, filled by the wiring like the exchange's.
  std::optional<otlp::OtlpReport> otlp;
  // Why causality broke and whose clock it is (docs/diagnosis.md); filled by add_diagnosis()
  // (core/report_diagnosis.hpp) once the clock readings are in.
  diagnose::DiagnosisReport diagnosis;

  const std::string& name(DomainId id) const { return domain_names.at(id); }
  const estimate::PairEstimate* estimate_for(DomainId src, DomainId dst) const {
    for (const auto& e : estimates)
      if (e.src == src && e.dst == dst) return &e;
    return nullptr;
  }
};

// With --exchange: the pairs and estimates of the partitions this agent owns join the local ones
// (pairs kept ordered by key, the overall health decided again over all of them), and a remote domain's
// clock bound is the one its sender declared.
void add_remote_results(AgentReport& report, exchange::RemoteResults&& remote);

}  // namespace skewscope
