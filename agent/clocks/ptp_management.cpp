#include "clocks/ptp_management.hpp"

#include <algorithm>
#include <cstdio>

namespace skewscope::clocks::ptp {
namespace {

constexpr std::uint8_t kMessageTypeManagement = 0x0D;
constexpr std::uint8_t kVersionPtp = 2;
constexpr std::uint8_t kControlManagement = 0x04;
constexpr std::uint8_t kLogIntervalManagement = 0x7F;
constexpr std::uint16_t kTlvManagement = 0x0001;
constexpr std::uint16_t kTlvManagementError = 0x0002;

// Body sizes of the data sets we decode (linuxptp tlv.h / ds.h, packed).
constexpr std::size_t kTimeStatusNpSize = 50;
constexpr std::size_t kPortDataSetSize = 26;
constexpr std::size_t kCurrentDataSetSize = 18;
constexpr std::size_t kParentDataSetSize = 32;
constexpr std::size_t kErrorFixedSize = 8;  // errorId, managementId, 4 reserved

// Cursor over a span that refuses to read past its end: callers check ok() once at the end
// instead of after every field, and a failed read yields zeros, never out-of-bounds memory.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : b_(b) {}
  bool ok() const { return ok_; }
  std::size_t remaining() const { return ok_ ? b_.size() - pos_ : 0; }
  std::uint64_t un(std::size_t n) {
    if (!ok_ || b_.size() - pos_ < n) {
      ok_ = false;
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | b_[pos_ + i];
    pos_ += n;
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(un(1)); }
  std::int8_t i8() { return static_cast<std::int8_t>(u8()); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(un(2)); }
  std::int32_t i32() { return static_cast<std::int32_t>(static_cast<std::uint32_t>(un(4))); }
  std::uint64_t u64() { return un(8); }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  void skip(std::size_t n) { (void)bytes(n); }
  std::span<const std::uint8_t> bytes(std::size_t n) {
    if (!ok_ || b_.size() - pos_ < n) {
      ok_ = false;
      return {};
    }
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  ClockIdentity clock_identity() {
    ClockIdentity id{};
    auto s = bytes(id.size());
    for (std::size_t i = 0; i < s.size(); ++i) id[i] = s[i];
    return id;
  }
  PortIdentity port_identity() {
    PortIdentity p;
    p.clock_identity = clock_identity();
    p.port_number = u16();
    return p;
  }

 private:
  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

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

TimeStatusNp read_time_status(Reader& r) {
  TimeStatusNp t;
  t.master_offset_ns = r.i64();
  t.ingress_time_ns = r.i64();
  t.cumulative_scaled_rate_offset = r.i32();
  t.scaled_last_gm_phase_change = r.i32();
  t.gm_time_base_indicator = r.u16();
  t.last_gm_phase_change_msb = r.u16();
  t.last_gm_phase_change_lsb = r.u64();
  t.last_gm_phase_change_frac = r.u16();
  t.gm_present = r.i32() != 0;
  t.gm_identity = r.clock_identity();
  return t;
}

PortDataSet read_port(Reader& r) {
  PortDataSet p;
  p.port_identity = r.port_identity();
  p.port_state = r.u8();
  p.log_min_delay_req_interval = r.i8();
  p.peer_mean_path_delay_scaled = r.i64();
  p.log_announce_interval = r.i8();
  p.announce_receipt_timeout = r.u8();
  p.log_sync_interval = r.i8();
  p.delay_mechanism = r.u8();
  p.log_min_pdelay_req_interval = r.i8();
  p.version_number = r.u8();
  return p;
}

CurrentDataSet read_current(Reader& r) {
  CurrentDataSet c;
  c.steps_removed = r.u16();
  c.offset_from_master_scaled = r.i64();
  c.mean_path_delay_scaled = r.i64();
  return c;
}

ParentDataSet read_parent(Reader& r) {
  ParentDataSet p;
  p.parent_port_identity = r.port_identity();
  p.parent_stats = r.u8() != 0;
  r.skip(1);  // reserved
  p.observed_parent_offset_scaled_log_variance = r.u16();
  p.observed_parent_clock_phase_change_rate = r.i32();
  p.grandmaster_priority1 = r.u8();
  p.grandmaster_clock_quality.clock_class = r.u8();
  p.grandmaster_clock_quality.clock_accuracy = r.u8();
  p.grandmaster_clock_quality.offset_scaled_log_variance = r.u16();
  p.grandmaster_priority2 = r.u8();
  p.grandmaster_identity = r.clock_identity();
  return p;
}

using BodyResult = Result<Body, DecodeError>;

// Decode the value of a MANAGEMENT TLV. Data sets are only decoded in RESPONSEs: a GET may carry
// a zero-filled placeholder (plain pmc) or nothing (pmc -z), and neither means anything.
BodyResult read_management_tlv(Reader& value, Action action) {
  const std::uint16_t id = value.u16();
  const std::size_t size = value.remaining();
  if (!value.ok()) return BodyResult::fail(DecodeError::kBadTlvLength);
  if (action != Action::kResponse) return BodyResult::ok(Body{OtherTlv{id, size}});
  auto need = [&](std::size_t n) { return size >= n; };
  switch (static_cast<ManagementId>(id)) {
    case ManagementId::kTimeStatusNp:
      if (!need(kTimeStatusNpSize)) return BodyResult::fail(DecodeError::kBadTlvLength);
      return BodyResult::ok(Body{read_time_status(value)});
    case ManagementId::kPortDataSet:
      if (!need(kPortDataSetSize)) return BodyResult::fail(DecodeError::kBadTlvLength);
      return BodyResult::ok(Body{read_port(value)});
    case ManagementId::kCurrentDataSet:
      if (!need(kCurrentDataSetSize)) return BodyResult::fail(DecodeError::kBadTlvLength);
      return BodyResult::ok(Body{read_current(value)});
    case ManagementId::kParentDataSet:
      if (!need(kParentDataSetSize)) return BodyResult::fail(DecodeError::kBadTlvLength);
      return BodyResult::ok(Body{read_parent(value)});
  }
  return BodyResult::ok(Body{OtherTlv{id, size}});
}

BodyResult read_error_tlv(Reader& value) {
  if (value.remaining() < kErrorFixedSize) return BodyResult::fail(DecodeError::kBadTlvLength);
  ManagementError e;
  e.error_id = value.u16();
  e.management_id = value.u16();
  value.skip(4);
  // displayData is an optional PTPText (length octet + text); if present it must fit.
  if (value.remaining() > 0) {
    const std::size_t n = value.u8();
    auto text = value.bytes(n);
    if (!value.ok()) return BodyResult::fail(DecodeError::kBadTlvLength);
    e.display_data.assign(text.begin(), text.end());
  }
  return BodyResult::ok(Body{std::move(e)});
}

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

const char* port_state_name(std::uint8_t state) {
  static constexpr const char* kNames[] = {"UNKNOWN",      "INITIALIZING", "FAULTY",      "DISABLED",
                                           "LISTENING",    "PRE_MASTER",   "MASTER",      "PASSIVE",
                                           "UNCALIBRATED", "SLAVE",        "GRAND_MASTER"};
  return state < std::size(kNames) ? kNames[state] : "UNKNOWN";
}

std::string to_string(const ClockIdentity& id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x.%02x%02x.%02x%02x%02x", id[0], id[1], id[2], id[3], id[4], id[5], id[6],
                id[7]);
  return buf;
}

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kTruncated: return "truncated";
    case DecodeError::kNotManagement: return "not_management";
    case DecodeError::kBadVersion: return "bad_version";
    case DecodeError::kBadLength: return "bad_length";
    case DecodeError::kBadAction: return "bad_action";
    case DecodeError::kBadTlvType: return "bad_tlv_type";
    case DecodeError::kBadTlvLength: return "bad_tlv_length";
  }
  return "unknown";
}

DecodeResult decode(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() < kHeaderSize) return DecodeResult::fail(DecodeError::kTruncated);
  Reader h(bytes);
  const std::uint8_t type = h.u8() & 0x0F;
  const std::uint8_t version = h.u8() & 0x0F;  // high nibble is minorVersionPTP in 1588-2019
  const std::uint16_t length = h.u16();
  if (type != kMessageTypeManagement) return DecodeResult::fail(DecodeError::kNotManagement);
  if (version != kVersionPtp) return DecodeResult::fail(DecodeError::kBadVersion);
  if (length < kManagementHeaderSize + kTlvHeaderSize) return DecodeResult::fail(DecodeError::kBadLength);
  if (bytes.size() < length) return DecodeResult::fail(DecodeError::kTruncated);
  // Trailing bytes beyond messageLength are not ours to interpret (1588 allows padding).
  Reader r(bytes.first(length));
  Message m;
  r.skip(4);
  m.domain = r.u8();
  r.skip(1 + 2 + 8 + 4);  // reserved, flagField, correctionField, reserved
  m.source = r.port_identity();
  m.sequence_id = r.u16();
  r.skip(2);  // controlField, logMessageInterval
  m.target = r.port_identity();
  m.starting_boundary_hops = r.u8();
  m.boundary_hops = r.u8();
  const std::uint8_t action = r.u8() & 0x0F;
  r.skip(1);
  if (action > static_cast<std::uint8_t>(Action::kAcknowledge)) return DecodeResult::fail(DecodeError::kBadAction);
  m.action = static_cast<Action>(action);

  const std::uint16_t tlv_type = r.u16();
  const std::uint16_t tlv_length = r.u16();
  if (!r.ok()) return DecodeResult::fail(DecodeError::kTruncated);
  if (tlv_length > r.remaining()) return DecodeResult::fail(DecodeError::kBadTlvLength);
  Reader value(r.bytes(tlv_length));
  BodyResult body;
  if (tlv_type == kTlvManagement) {
    body = read_management_tlv(value, m.action);
  } else if (tlv_type == kTlvManagementError) {
    body = read_error_tlv(value);
  } else {
    return DecodeResult::fail(DecodeError::kBadTlvType);
  }
  if (!body) return DecodeResult::fail(body.error);
  if (!value.ok()) return DecodeResult::fail(DecodeError::kBadTlvLength);
  m.body = std::move(*body);
  return DecodeResult::ok(std::move(m));
}

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
