// The encoding half of the linuxptp management codec (ptp_management.hpp): the GET the agent
// sends, and RESPONSEs for tests and fake ptp4l servers. Kept apart from the decoder so that the
// code reading untrusted bytes stays small enough to review on its own.
#include "clocks/ptp_management.hpp"

#include <algorithm>

#include "clocks/ptp_management_constants.hpp"

namespace skewscope::clocks::ptp {
namespace {

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void un(std::uint64_t v, std::size_t n) {
    for (std::size_t i = n; i-- > 0;) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u8(std::uint8_t v) { un(v, 1); }
  void u16(std::uint16_t v) { un(v, 2); }
  void u32(std::uint32_t v) { un(v, 4); }
  void u64(std::uint64_t v) { un(v, 8); }
  void clock_identity(const ClockIdentity& id) { out_.insert(out_.end(), id.begin(), id.end()); }
  void port_identity(const PortIdentity& p) {
    clock_identity(p.clock_identity);
    u16(p.port_number);
  }
  void put16_at(std::size_t at, std::uint16_t v) {
    out_[at] = static_cast<std::uint8_t>(v >> 8);
    out_[at + 1] = static_cast<std::uint8_t>(v);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

void write_body(Writer& w, const Body& body) {
  if (auto* t = std::get_if<TimeStatusNp>(&body)) {
    w.u64(static_cast<std::uint64_t>(t->master_offset_ns));
    w.u64(static_cast<std::uint64_t>(t->ingress_time_ns));
    w.u32(static_cast<std::uint32_t>(t->cumulative_scaled_rate_offset));
    w.u32(static_cast<std::uint32_t>(t->scaled_last_gm_phase_change));
    w.u16(t->gm_time_base_indicator);
    w.u16(t->last_gm_phase_change_msb);
    w.u64(t->last_gm_phase_change_lsb);
    w.u16(t->last_gm_phase_change_frac);
    w.u32(t->gm_present ? 1 : 0);
    w.clock_identity(t->gm_identity);
  } else if (auto* p = std::get_if<PortDataSet>(&body)) {
    w.port_identity(p->port_identity);
    w.u8(p->port_state);
    w.u8(static_cast<std::uint8_t>(p->log_min_delay_req_interval));
    w.u64(static_cast<std::uint64_t>(p->peer_mean_path_delay_scaled));
    w.u8(static_cast<std::uint8_t>(p->log_announce_interval));
    w.u8(p->announce_receipt_timeout);
    w.u8(static_cast<std::uint8_t>(p->log_sync_interval));
    w.u8(p->delay_mechanism);
    w.u8(static_cast<std::uint8_t>(p->log_min_pdelay_req_interval));
    w.u8(p->version_number);
  } else if (auto* c = std::get_if<CurrentDataSet>(&body)) {
    w.u16(c->steps_removed);
    w.u64(static_cast<std::uint64_t>(c->offset_from_master_scaled));
    w.u64(static_cast<std::uint64_t>(c->mean_path_delay_scaled));
  } else if (auto* pd = std::get_if<ParentDataSet>(&body)) {
    w.port_identity(pd->parent_port_identity);
    w.u8(pd->parent_stats ? 1 : 0);
    w.u8(0);
    w.u16(pd->observed_parent_offset_scaled_log_variance);
    w.u32(static_cast<std::uint32_t>(pd->observed_parent_clock_phase_change_rate));
    w.u8(pd->grandmaster_priority1);
    w.u8(pd->grandmaster_clock_quality.clock_class);
    w.u8(pd->grandmaster_clock_quality.clock_accuracy);
    w.u16(pd->grandmaster_clock_quality.offset_scaled_log_variance);
    w.u8(pd->grandmaster_priority2);
    w.clock_identity(pd->grandmaster_identity);
  }
}

std::uint16_t body_id(const Body& body) {
  if (std::holds_alternative<TimeStatusNp>(body)) return static_cast<std::uint16_t>(ManagementId::kTimeStatusNp);
  if (std::holds_alternative<PortDataSet>(body)) return static_cast<std::uint16_t>(ManagementId::kPortDataSet);
  if (std::holds_alternative<CurrentDataSet>(body)) return static_cast<std::uint16_t>(ManagementId::kCurrentDataSet);
  if (std::holds_alternative<ParentDataSet>(body)) return static_cast<std::uint16_t>(ManagementId::kParentDataSet);
  if (auto* o = std::get_if<OtherTlv>(&body)) return o->management_id;
  return 0;
}

void write_management_header(Writer& w, std::uint8_t domain, const PortIdentity& source, std::uint16_t seq,
                             const PortIdentity& target, std::uint8_t starting_hops, std::uint8_t hops, Action action) {
  w.u8(kMessageTypeManagement);  // transportSpecific 0
  w.u8(kVersionPtp);
  w.u16(0);  // messageLength, patched once known
  w.u8(domain);
  w.u8(0);   // reserved
  w.u16(0);  // flagField
  w.u64(0);  // correctionField
  w.u32(0);  // reserved
  w.port_identity(source);
  w.u16(seq);
  w.u8(kControlManagement);
  w.u8(kLogIntervalManagement);
  w.port_identity(target);
  w.u8(starting_hops);
  w.u8(hops);
  w.u8(static_cast<std::uint8_t>(action));
  w.u8(0);  // reserved
}

}  // namespace

std::array<std::uint8_t, kGetRequestSize> encode_get(const GetRequest& req) noexcept {
  std::array<std::uint8_t, kGetRequestSize> out{};
  std::size_t i = 0;
  auto put = [&](std::uint64_t v, std::size_t n) {
    for (std::size_t k = n; k-- > 0;) out[i++] = static_cast<std::uint8_t>(v >> (8 * k));
  };
  put(kMessageTypeManagement, 1);
  put(kVersionPtp, 1);
  put(kGetRequestSize, 2);
  put(req.domain, 1);
  i += 1 + 2 + 8 + 4;  // reserved, flagField, correctionField, reserved: zero
  for (auto b : req.source.clock_identity) put(b, 1);
  put(req.source.port_number, 2);
  put(req.sequence_id, 2);
  put(kControlManagement, 1);
  put(kLogIntervalManagement, 1);
  for (int k = 0; k < 10; ++k) put(0xFF, 1);  // targetPortIdentity: all clocks, all ports
  put(0, 1);                                  // startingBoundaryHops
  put(0, 1);                                  // boundaryHops: answer here, never forward onto the network
  put(static_cast<std::uint8_t>(Action::kGet), 1);
  put(0, 1);
  put(kTlvManagement, 2);
  put(2, 2);  // lengthField covers managementId only: empty data field
  put(static_cast<std::uint16_t>(req.id), 2);
  return out;
}

std::vector<std::uint8_t> encode_response(const Message& req, const Body& body, const PortIdentity& responder) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  const std::uint8_t hops = static_cast<std::uint8_t>(req.starting_boundary_hops - req.boundary_hops);
  write_management_header(w, req.domain, responder, req.sequence_id, req.source, hops, hops, Action::kResponse);
  const std::size_t tlv_at = out.size();
  if (auto* e = std::get_if<ManagementError>(&body)) {
    w.u16(kTlvManagementError);
    w.u16(0);
    w.u16(e->error_id);
    w.u16(e->management_id);
    w.u32(0);
    if (!e->display_data.empty()) {
      const std::size_t n = std::min<std::size_t>(e->display_data.size(), 255);
      w.u8(static_cast<std::uint8_t>(n));
      out.insert(out.end(), e->display_data.begin(), e->display_data.begin() + static_cast<std::ptrdiff_t>(n));
    }
  } else {
    w.u16(kTlvManagement);
    w.u16(0);
    w.u16(body_id(body));
    write_body(w, body);
  }
  if ((out.size() - tlv_at) % 2 != 0) w.u8(0);  // TLVs have even length (1588 §14.1.1)
  w.put16_at(tlv_at + 2, static_cast<std::uint16_t>(out.size() - tlv_at - kTlvHeaderSize));
  w.put16_at(2, static_cast<std::uint16_t>(out.size()));
  return out;
}

}  // namespace skewscope::clocks::ptp
