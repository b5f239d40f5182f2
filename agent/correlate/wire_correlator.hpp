// Wire-level pairing: one Correlator per wire timestamp source, so a span never mixes a software
// stamp with a hardware one. Keys are the syscall halves' (directed 4-tuple, sequence range), so
// the correlator is the same class; only the halves differ (one per TCP segment, not per call).
//
// Every wire half has a software stamp (the tc program's own time at least) and goes to the
// software level; a half whose NIC also stamped it goes to the hardware level as well, where it
// pairs only with another hardware-stamped half.
#pragma once

#include <optional>
#include <vector>

#include "correlate/correlator.hpp"

namespace skewscope {

class WireCorrelator {
 public:
  explicit WireCorrelator(CorrelatorLimits limits = {}) : software_(limits), hardware_(limits), acks_(limits) {}

  // `software`: the half with its software stamp in domain time; `hardware`: the same half with
  // its hardware stamp in domain time, when it has one. Spans come out tagged with their source.
  void add(const Half& software, const std::optional<Half>& hardware, std::vector<Span>& out);
  // A hardware stamp that came on its own (sock_ops reports the NIC's stamp in a separate
  // callback from the software one): the hardware level only.
  void add_hardware_only(const Half& hardware, std::vector<Span>& out);
  // A pure ACK, keyed by (its directed 4-tuple, ack number): its own correlator, since ack
  // numbers live in the other direction's sequence space and would mispair with data keys. Its
  // spans are software wire spans of the direction the ACK travelled.
  void add_ack(const Half& ack, std::vector<Span>& out);
  void expire(std::int64_t now_ns);
  const Correlator& acks() const { return acks_; }

  const Correlator& level(TimestampSource s) const {
    return s == TimestampSource::wire_hardware ? hardware_ : software_;
  }

 private:
  Correlator software_;
  Correlator hardware_;
  Correlator acks_;
};

}  // namespace skewscope
