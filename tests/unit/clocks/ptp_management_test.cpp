// The management codec against datagrams captured from Debian's ptp4l 3.1.1, checked field by
// field against pmc's own decoding of the same bytes, plus every truncated prefix and garbage.
#include "clocks/ptp_management.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "ptp4l_data.hpp"

using namespace skewscope::clocks;
using namespace skewscope::clocks::ptp;
namespace td = skewscope::clocks::testdata;

namespace {

Message decode_ok(const std::vector<std::uint8_t>& b) {
  auto r = decode(b);
  if (!r) FAIL("decode failed: " << to_string(r.error));
  return *r;
}

DecodeError decode_err(const std::vector<std::uint8_t>& b) {
  auto r = decode(b);
  REQUIRE(!r);
  return r.error;
}

std::string port_string(const PortIdentity& p) {
  return to_string(p.clock_identity) + "-" + std::to_string(p.port_number);
}

long long as_int(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 0); }

// pmc prints TimeInterval fields as "%.1f" of ns.
void check_scaled(std::int64_t scaled, const std::string& pmc) {
  CHECK(static_cast<double>(scaled) / 65536.0 == doctest::Approx(std::strtod(pmc.c_str(), nullptr)).epsilon(1e-9));
}

void put16(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v >> 8);
  b[at + 1] = static_cast<std::uint8_t>(v);
}

}  // namespace

TEST_CASE("captured replies decode to what pmc printed for them") {
  for (const auto& name : td::captured_exchanges()) {
    CAPTURE(name);
    const Message m = decode_ok(td::bytes(name + ".bin"));
    const td::PmcText pmc = td::pmc_text(name + ".pmc.txt");
    REQUIRE(pmc.seq >= 0);
    CHECK(port_string(m.source) == pmc.source);
    CHECK(m.sequence_id == pmc.seq);
    CHECK(m.action == Action::kResponse);
    CHECK(m.boundary_hops == 0);
    const auto& f = pmc.fields;
    if (auto* t = std::get_if<TimeStatusNp>(&m.body)) {
      CHECK(t->master_offset_ns == as_int(f.at("master_offset")));
      CHECK(t->ingress_time_ns == as_int(f.at("ingress_time")));
      CHECK(t->scaled_last_gm_phase_change == as_int(f.at("scaledLastGmPhaseChange")));
      CHECK(t->gm_time_base_indicator == as_int(f.at("gmTimeBaseIndicator")));
      CHECK(t->gm_present == (f.at("gmPresent") == "true"));
      CHECK(to_string(t->gm_identity) == f.at("gmIdentity"));
    } else if (auto* p = std::get_if<PortDataSet>(&m.body)) {
      CHECK(port_string(p->port_identity) == f.at("portIdentity"));
      CHECK(std::string(port_state_name(p->port_state)) == f.at("portState"));
      CHECK(p->log_min_delay_req_interval == as_int(f.at("logMinDelayReqInterval")));
      check_scaled(p->peer_mean_path_delay_scaled, f.at("peerMeanPathDelay"));
      CHECK(p->log_announce_interval == as_int(f.at("logAnnounceInterval")));
      CHECK(p->announce_receipt_timeout == as_int(f.at("announceReceiptTimeout")));
      CHECK(p->log_sync_interval == as_int(f.at("logSyncInterval")));
      CHECK(p->delay_mechanism == as_int(f.at("delayMechanism")));
      CHECK(p->log_min_pdelay_req_interval == as_int(f.at("logMinPdelayReqInterval")));
      CHECK(p->version_number == as_int(f.at("versionNumber")));
    } else if (auto* c = std::get_if<CurrentDataSet>(&m.body)) {
      CHECK(c->steps_removed == as_int(f.at("stepsRemoved")));
      check_scaled(c->offset_from_master_scaled, f.at("offsetFromMaster"));
      check_scaled(c->mean_path_delay_scaled, f.at("meanPathDelay"));
    } else if (auto* pd = std::get_if<ParentDataSet>(&m.body)) {
      CHECK(port_string(pd->parent_port_identity) == f.at("parentPortIdentity"));
      CHECK(pd->parent_stats == (as_int(f.at("parentStats")) != 0));
      CHECK(pd->observed_parent_offset_scaled_log_variance == as_int(f.at("observedParentOffsetScaledLogVariance")));
      CHECK(pd->observed_parent_clock_phase_change_rate == as_int(f.at("observedParentClockPhaseChangeRate")));
      CHECK(pd->grandmaster_priority1 == as_int(f.at("grandmasterPriority1")));
      CHECK(pd->grandmaster_clock_quality.clock_class == as_int(f.at("gm.ClockClass")));
      CHECK(pd->grandmaster_clock_quality.clock_accuracy == as_int(f.at("gm.ClockAccuracy")));
      CHECK(pd->grandmaster_clock_quality.offset_scaled_log_variance == as_int(f.at("gm.OffsetScaledLogVariance")));
      CHECK(pd->grandmaster_priority2 == as_int(f.at("grandmasterPriority2")));
      CHECK(to_string(pd->grandmaster_identity) == f.at("grandmasterIdentity"));
    } else {
      FAIL("unexpected body kind");
    }
  }
}

TEST_CASE("the slave capture is a free-running slave following the grandmaster") {
  const auto ts = std::get<TimeStatusNp>(decode_ok(td::bytes("slave_time_status_np.bin")).body);
  const auto port = std::get<PortDataSet>(decode_ok(td::bytes("slave_port_data_set.bin")).body);
  const auto gm_ts = std::get<TimeStatusNp>(decode_ok(td::bytes("gm_time_status_np.bin")).body);
  const auto gm_port = std::get<PortDataSet>(decode_ok(td::bytes("gm_port_data_set.bin")).body);
  CHECK(ts.gm_present);
  CHECK(port.port_state == static_cast<std::uint8_t>(PortState::kUncalibrated));
  CHECK(ts.gm_identity == gm_ts.gm_identity);
  CHECK_FALSE(gm_ts.gm_present);
  CHECK(gm_port.port_state == static_cast<std::uint8_t>(PortState::kMaster));
}

TEST_CASE("encode_get reproduces pmc -z's request byte for byte") {
  for (const auto& name : td::captured_exchanges()) {
    CAPTURE(name);
    const auto wire = td::bytes(name + ".request.bin");
    const Message req = decode_ok(wire);
    CHECK(req.action == Action::kGet);
    CHECK(req.boundary_hops == 0);
    CHECK(req.target == PortIdentity{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0xffff});
    const auto* other = std::get_if<OtherTlv>(&req.body);
    REQUIRE(other != nullptr);
    CHECK(other->data_size == 0);
    const auto ours =
        encode_get({static_cast<ManagementId>(other->management_id), req.sequence_id, req.source, req.domain});
    CHECK(std::vector<std::uint8_t>(ours.begin(), ours.end()) == wire);
  }
}

TEST_CASE("encode_response reproduces ptp4l's reply byte for byte") {
  for (const auto& name : td::captured_exchanges()) {
    CAPTURE(name);
    const Message req = decode_ok(td::bytes(name + ".request.bin"));
    const auto wire = td::bytes(name + ".bin");
    const Message resp = decode_ok(wire);
    CHECK(encode_response(req, resp.body, resp.source) == wire);
  }
}

TEST_CASE("a MANAGEMENT_ERROR_STATUS reply decodes to its error and id") {
  const Message m = decode_ok(td::bytes("slave_error_not_supported.bin"));
  const auto* e = std::get_if<ManagementError>(&m.body);
  REQUIRE(e != nullptr);
  CHECK(e->error_id == 0x0006);  // NOT_SUPPORTED
  CHECK(e->management_id == 0x4000);
  CHECK(e->display_data.empty());
  CHECK(m.sequence_id == 200);

  // With display text, round-tripped through the encoder.
  const Message req = decode_ok(td::bytes("slave_time_status_np.request.bin"));
  const auto bytes = encode_response(req, ManagementError{0x0002, 0xC000, "no such id"}, {});
  const auto back = std::get<ManagementError>(decode_ok(bytes).body);
  CHECK(back.error_id == 0x0002);
  CHECK(back.display_data == "no such id");
  CHECK(bytes.size() % 2 == 0);
}

TEST_CASE("every truncated prefix is an error, never a read past the end") {
  std::vector<std::string> files{"slave_error_not_supported.bin"};
  for (const auto& name : td::captured_exchanges()) {
    files.push_back(name + ".bin");
    files.push_back(name + ".request.bin");
  }
  for (const auto& f : files) {
    CAPTURE(f);
    const auto full = td::bytes(f);
    REQUIRE(full.size() > kHeaderSize);
    for (std::size_t n = 0; n < full.size(); ++n) {
      // Copy into an exactly-sized buffer so ASan would see any overread.
      const std::vector<std::uint8_t> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      CHECK(decode_err(prefix) == DecodeError::kTruncated);
    }
  }
}

TEST_CASE("padding after messageLength is ignored") {
  auto b = td::bytes("slave_time_status_np.bin");
  const auto want = std::get<TimeStatusNp>(decode_ok(b).body).master_offset_ns;
  b.insert(b.end(), {0xde, 0xad, 0xbe, 0xef});
  CHECK(std::get<TimeStatusNp>(decode_ok(b).body).master_offset_ns == want);
}

TEST_CASE("malformed headers and TLVs are typed errors") {
  const auto good = td::bytes("slave_time_status_np.bin");
  auto b = good;
  b[0] = 0x00;  // a Sync message
  CHECK(decode_err(b) == DecodeError::kNotManagement);
  b = good;
  b[1] = 0x01;
  CHECK(decode_err(b) == DecodeError::kBadVersion);
  b = good;
  b[1] = 0x12;  // 1588-2019 minorVersionPTP 1 is still version 2
  CHECK_NOTHROW(decode_ok(b));
  b = good;
  put16(b, 2, 40);
  CHECK(decode_err(b) == DecodeError::kBadLength);
  b = good;
  put16(b, 2, 0xffff);
  CHECK(decode_err(b) == DecodeError::kTruncated);
  b = good;
  b[46] = 0x07;
  CHECK(decode_err(b) == DecodeError::kBadAction);
  b = good;
  put16(b, 48, 0x0003);
  CHECK(decode_err(b) == DecodeError::kBadTlvType);
  b = good;
  put16(b, 50, 0x0100);  // TLV longer than the message
  CHECK(decode_err(b) == DecodeError::kBadTlvLength);
  b = good;
  put16(b, 50, 0);  // no room for the managementId
  CHECK(decode_err(b) == DecodeError::kBadTlvLength);
  // A TIME_STATUS_NP too short for its fields, lengths consistent with each other.
  b = good;
  b.resize(good.size() - 10);
  put16(b, 2, static_cast<std::uint16_t>(b.size()));
  put16(b, 50, static_cast<std::uint16_t>(b.size() - 52));
  CHECK(decode_err(b) == DecodeError::kBadTlvLength);
  // An error TLV whose display text claims more bytes than there are.
  auto e = td::bytes("slave_error_not_supported.bin");
  e.push_back(40);  // PTPText length 40, no text
  e.push_back(0);
  put16(e, 2, static_cast<std::uint16_t>(e.size()));
  put16(e, 50, static_cast<std::uint16_t>(e.size() - 52));
  CHECK(decode_err(e) == DecodeError::kBadTlvLength);
  // An error TLV shorter than its fixed part.
  e = td::bytes("slave_error_not_supported.bin");
  put16(e, 50, 4);
  CHECK(decode_err(e) == DecodeError::kBadTlvLength);
}

TEST_CASE("a RESPONSE for an id we do not decode is kept as OtherTlv") {
  auto b = td::bytes("slave_current_data_set.bin");
  put16(b, 52, 0x2000);  // DEFAULT_DATA_SET
  const Message m = decode_ok(b);
  const auto* o = std::get_if<OtherTlv>(&m.body);
  REQUIRE(o != nullptr);
  CHECK(o->management_id == 0x2000);
  CHECK(o->data_size == 18);
}

TEST_CASE("random garbage and mutations of real replies never crash the decoder") {
  std::mt19937 rng(12345);
  std::vector<std::vector<std::uint8_t>> seeds;
  for (const auto& name : td::captured_exchanges()) seeds.push_back(td::bytes(name + ".bin"));
  std::size_t decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> b;
    if (i % 4 == 0) {
      b.resize(rng() % 200);
      for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    } else {
      b = seeds[rng() % seeds.size()];
      for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k)
        b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
      if (rng() % 3 == 0) b.resize(rng() % (b.size() + 1));
    }
    decoded += decode(b) ? 1 : 0;
  }
  CHECK(decoded > 0);  // mutations that keep the structure still decode
}

TEST_CASE("names") {
  CHECK(std::string(port_state_name(9)) == "SLAVE");
  CHECK(std::string(port_state_name(8)) == "UNCALIBRATED");
  CHECK(std::string(port_state_name(0)) == "UNKNOWN");
  CHECK(std::string(port_state_name(200)) == "UNKNOWN");
  CHECK(to_string(ClockIdentity{0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55}) == "001122.fffe.334455");
  CHECK(std::string(to_string(DecodeError::kTruncated)) == "truncated");
}
