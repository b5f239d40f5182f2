// Codec for the linuxptp management protocol (IEEE 1588 management messages as spoken by
// ptp4l on its UNIX datagram socket). Pure: bytes in, typed values or an error out. No I/O,
// no exceptions past the API, every read bounds-checked against the span it was given.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "skewscope/result.hpp"

namespace skewscope::clocks::ptp {

// Wire sizes (IEEE 1588-2008 §13.3, §15.4).
inline constexpr std::size_t kHeaderSize = 34;            // common PTP header
inline constexpr std::size_t kManagementHeaderSize = 48;  // + target port, hops, action
inline constexpr std::size_t kTlvHeaderSize = 4;          // tlvType, lengthField
inline constexpr std::size_t kGetRequestSize = kManagementHeaderSize + kTlvHeaderSize + 2;

enum class ManagementId : std::uint16_t {
  kCurrentDataSet = 0x2001,
  kParentDataSet = 0x2002,
  kPortDataSet = 0x2004,
  kTimeStatusNp = 0xC000,  // linuxptp implementation-specific
};

enum class Action : std::uint8_t { kGet = 0, kSet = 1, kResponse = 2, kCommand = 3, kAcknowledge = 4 };

// linuxptp / IEEE 1588 port states (portDS.portState).
enum class PortState : std::uint8_t {
  kInitializing = 1,
  kFaulty = 2,
  kDisabled = 3,
  kListening = 4,
  kPreMaster = 5,
  kMaster = 6,
  kPassive = 7,
  kUncalibrated = 8,
  kSlave = 9,
  kGrandMaster = 10,
};
const char* port_state_name(std::uint8_t state);  // "SLAVE", ..., "UNKNOWN"

using ClockIdentity = std::array<std::uint8_t, 8>;

struct PortIdentity {
  ClockIdentity clock_identity{};
  std::uint16_t port_number = 0;
  bool operator==(const PortIdentity&) const = default;
};
std::string to_string(const ClockIdentity&);  // linuxptp style "001122.fffe.334455"

// TimeInterval fields are nanoseconds scaled by 2^16 on the wire; kept raw so nothing is lost,
// converted on demand.
inline double scaled_ns_to_seconds(std::int64_t scaled) { return static_cast<double>(scaled) / 65536.0 / 1e9; }

struct TimeStatusNp {
  std::int64_t master_offset_ns = 0;
  std::int64_t ingress_time_ns = 0;  // time base of ptp4l's timestamps (PHC or system clock)
  std::int32_t cumulative_scaled_rate_offset = 0;
  std::int32_t scaled_last_gm_phase_change = 0;
  std::uint16_t gm_time_base_indicator = 0;
  std::uint16_t last_gm_phase_change_msb = 0;  // ScaledNs: 16+64 bits of ns, 16 bits fraction
  std::uint64_t last_gm_phase_change_lsb = 0;
  std::uint16_t last_gm_phase_change_frac = 0;
  bool gm_present = false;
  ClockIdentity gm_identity{};
  bool operator==(const TimeStatusNp&) const = default;
};

struct PortDataSet {
  PortIdentity port_identity;
  std::uint8_t port_state = 0;
  std::int8_t log_min_delay_req_interval = 0;
  std::int64_t peer_mean_path_delay_scaled = 0;
  std::int8_t log_announce_interval = 0;
  std::uint8_t announce_receipt_timeout = 0;
  std::int8_t log_sync_interval = 0;
  std::uint8_t delay_mechanism = 0;
  std::int8_t log_min_pdelay_req_interval = 0;
  std::uint8_t version_number = 0;
  bool operator==(const PortDataSet&) const = default;
};

struct CurrentDataSet {
  std::uint16_t steps_removed = 0;
  std::int64_t offset_from_master_scaled = 0;
  std::int64_t mean_path_delay_scaled = 0;
  bool operator==(const CurrentDataSet&) const = default;
};

struct ClockQuality {
  std::uint8_t clock_class = 0;
  std::uint8_t clock_accuracy = 0;
  std::uint16_t offset_scaled_log_variance = 0;
  bool operator==(const ClockQuality&) const = default;
};

struct ParentDataSet {
  PortIdentity parent_port_identity;
  bool parent_stats = false;
  std::uint16_t observed_parent_offset_scaled_log_variance = 0;
  std::int32_t observed_parent_clock_phase_change_rate = 0;
  std::uint8_t grandmaster_priority1 = 0;
  ClockQuality grandmaster_clock_quality;
  std::uint8_t grandmaster_priority2 = 0;
  ClockIdentity grandmaster_identity{};
  bool operator==(const ParentDataSet&) const = default;
};

// MANAGEMENT_ERROR_STATUS TLV (type 0x0002).
struct ManagementError {
  std::uint16_t error_id = 0;       // 0x0002 NO_SUCH_ID, 0x0006 NOT_SUPPORTED, ...
  std::uint16_t management_id = 0;  // the id the request asked for
  std::string display_data;
  bool operator==(const ManagementError&) const = default;
};

// A management TLV whose body is not decoded: a GET (no data needed), or an id we do not use.
struct OtherTlv {
  std::uint16_t management_id = 0;
  std::size_t data_size = 0;
  bool operator==(const OtherTlv&) const = default;
};

using Body = std::variant<TimeStatusNp, PortDataSet, CurrentDataSet, ParentDataSet, ManagementError, OtherTlv>;

struct Message {
  std::uint8_t domain = 0;
  PortIdentity source;
  PortIdentity target;
  std::uint16_t sequence_id = 0;
  std::uint8_t starting_boundary_hops = 0;
  std::uint8_t boundary_hops = 0;
  Action action = Action::kGet;
  Body body;
};

enum class DecodeError {
  kTruncated,      // shorter than the header or than its own messageLength
  kNotManagement,  // messageType is not 0xD
  kBadVersion,     // versionPTP is not 2
  kBadLength,      // messageLength too small for a management message with a TLV
  kBadAction,      // actionField outside 0..4
  kBadTlvType,     // neither MANAGEMENT nor MANAGEMENT_ERROR_STATUS
  kBadTlvLength,   // TLV runs past the message or is too short for its id
};
const char* to_string(DecodeError);

using DecodeResult = Result<Message, DecodeError>;

// Any management message (GET or RESPONSE, as a fake server in tests also needs to read GETs).
DecodeResult decode(std::span<const std::uint8_t> bytes) noexcept;

struct GetRequest {
  ManagementId id = ManagementId::kTimeStatusNp;
  std::uint16_t sequence_id = 0;
  PortIdentity source;  // pmc uses clock identity 0 and its pid as port number over UDS
  std::uint8_t domain = 0;
};

// A GET with boundaryHops 0 (answer locally, do not forward), the all-ones wildcard target port
// and an empty data field (what `pmc -z` sends; ptp4l accepts it for every GET).
std::array<std::uint8_t, kGetRequestSize> encode_get(const GetRequest& req) noexcept;

// Build a RESPONSE to `req` carrying `body` (used by tests and fake servers, not by the agent).
// Only the typed bodies and ManagementError are encoded; OtherTlv gives an empty data field.
std::vector<std::uint8_t> encode_response(const Message& req, const Body& body, const PortIdentity& responder);

}  // namespace skewscope::clocks::ptp
