// The decoding half of the linuxptp management codec (ptp_management.hpp): a bounds-checked
// reader, the data sets the agent reads, and the names printed for decoded values. It is the
// part that faces untrusted bytes (ptp4l's socket, the fuzzers); the encoder, which only tests
// and fake servers use, is in ptp_management_encode.cpp.
#include "clocks/ptp_management.hpp"

#include <cstdio>

#include "clocks/ptp_management_constants.hpp"

namespace skewscope::clocks::ptp {
namespace {

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

}  // namespace skewscope::clocks::ptp
