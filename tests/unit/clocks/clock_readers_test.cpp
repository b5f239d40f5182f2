// The kernel-clock and PHC readers on this machine (no PHC here: "none", cleanly), their pure
// parts with synthetic input, and the monitor end to end against a fake ptp4l.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "clocks/clock_monitor.hpp"
#include "clocks/kernel_clock.hpp"
#include "clocks/phc.hpp"
#include "fake_ptp4l.hpp"

using namespace skewscope::clocks;
using skewscope::clocks::testing::FakePtp4l;
using skewscope::clocks::testing::TempDir;

TEST_CASE("adjtimex(modes=0) reads this machine's kernel clock") {
  auto r = read_kernel_clock();
  REQUIRE(r);
  const auto& t = *r;
  CHECK(t.maxerror_seconds >= 0);
  CHECK(t.esterror_seconds >= 0);
  CHECK(t.sync_status == (t.state == 5 ? 0 : 1));
  CHECK(t.unsync == ((t.status & 0x40) != 0));
  CHECK(t.tai_offset_seconds >= 0);
}

TEST_CASE("timex interpretation: units, STA_NANO, TIME_ERROR, the 16 s cap") {
  RawTimex raw;
  raw.offset = 1500;
  raw.freq = 65536 * 12;
  raw.maxerror = 250;
  raw.esterror = 10;
  raw.status = 0x2001;  // STA_NANO | STA_PLL
  raw.tai = 37;
  raw.state = 0;
  auto t = interpret_timex(raw);
  CHECK(t.nano);
  CHECK(t.offset_seconds == doctest::Approx(1.5e-6));
  CHECK(t.frequency_ppm == doctest::Approx(12.0));
  CHECK(t.maxerror_seconds == doctest::Approx(250e-6));
  CHECK(t.esterror_seconds == doctest::Approx(10e-6));
  CHECK(t.sync_status == 1);
  CHECK(t.tai_valid());
  CHECK_FALSE(t.maxerror_at_cap);
  raw.status = 0x0040;  // STA_UNSYNC, µs
  raw.state = 5;        // TIME_ERROR
  raw.maxerror = kNtpPhaseLimitUs;
  raw.tai = 0;
  t = interpret_timex(raw);
  CHECK_FALSE(t.nano);
  CHECK(t.offset_seconds == doctest::Approx(1.5e-3));
  CHECK(t.unsync);
  CHECK(t.sync_status == 0);
  CHECK(t.maxerror_at_cap);
  CHECK_FALSE(t.tai_valid());
}

TEST_CASE("PHC enumeration on this machine reports what is there, cleanly") {
  // This machine has no /sys/class/ptp entries; on one that has, each must read or fail as a value.
  for (const auto& clock : list_phcs()) {
    const PhcReading r = read_phc(clock);
    CHECK((r.offset.has_value() || r.error.has_value()));
  }
  CHECK(list_phcs("/nonexistent/sys/class/ptp").empty());
}

TEST_CASE("PHC enumeration: only ptpN entries, in numeric order; a missing device is an error value") {
  TempDir sys, dev;
  for (const char* n : {"ptp10", "ptp2", "ptp0", "ptpx", "foo"})
    std::filesystem::create_directory(sys.path() + "/" + n);
  std::ofstream(sys.path() + "/ptp2/clock_name") << "fake-driver\n";
  CHECK(list_phcs(sys.path()) == std::vector<std::string>{"ptp0", "ptp2", "ptp10"});
  const PhcReading r = read_phc("ptp2", sys.path(), dev.path());
  CHECK(r.name == "fake-driver");
  REQUIRE(r.error.has_value());
  CHECK(*r.error == ErrorReason::kMissing);
  CHECK_FALSE(r.offset.has_value());
  // A device that is not a PHC (a regular file) does not implement the ioctls.
  std::ofstream(dev.path() + "/ptp0") << "x";
  const PhcReading f = read_phc("ptp0", sys.path(), dev.path());
  REQUIRE(f.error.has_value());
  CHECK(*f.error == ErrorReason::kUnsupported);
}

TEST_CASE("best_sample keeps the shortest bracket and takes its midpoint") {
  const PhcSample s[] = {
      {1000, 500, 1400},   // interval 400
      {2000, 1600, 2100},  // interval 100: offset = 2050 - 1600 = 450
      {3000, 2000, 3300},
      {5000, 0, 4000},  // runs backwards: ignored
  };
  const auto b = best_sample(s);
  REQUIRE(b);
  CHECK(b->interval_ns == 100);
  CHECK(b->offset_ns == 450);
  CHECK_FALSE(best_sample({}));
  const PhcSample backwards[] = {{10, 0, 5}};
  CHECK_FALSE(best_sample(backwards));
  // A cross-timestamp (PRECISE) has a zero bracket.
  const PhcSample precise[] = {{1'000'000'037'000'000'000, 1'000'000'000'000'000'000, 1'000'000'037'000'000'000}};
  CHECK(best_sample(precise)->offset_ns == 37'000'000'000);
}

TEST_CASE("the monitor: a configured ptp4l socket, PHCs and timex in one snapshot") {
  TempDir dir;
  FakePtp4l server(dir.path() + "/ptp4l");
  ClockConfig cfg;
  cfg.ptp4l_sockets = {dir.path() + "/ptp4l", dir.path() + "/absent"};
  cfg.client_dir = dir.path();
  cfg.reply_timeout = std::chrono::milliseconds(2000);
  cfg.phc_sysfs_dir = dir.path() + "/no-ptp-class";
  ClockMonitor m(cfg);
  CHECK_FALSE(m.snapshot().polled);
  m.poll();
  const ClockSnapshot s = m.snapshot();
  CHECK(s.polled);
  REQUIRE(s.ptp.size() == 2);
  const auto& p = s.ptp[0];
  CHECK(p.fresh);
  CHECK(p.status == ClockStatus::kFreeRunning);  // the captured slave is a free_running one
  CHECK(p.port_state == 8);
  CHECK(p.gm_present == true);
  REQUIRE(p.master_offset_seconds);
  REQUIRE(p.mean_path_delay_seconds);
  CHECK(*p.mean_path_delay_seconds > 0);
  CHECK(s.status == ClockStatus::kFreeRunning);
  CHECK(s.bound_source == "ptp4l:" + dir.path() + "/ptp4l");
  // First sight: the offset is trusted only from the next sync on (see error_bound.hpp).
  CHECK_FALSE(s.error_bound_seconds);
  const auto& absent = s.ptp[1];
  CHECK(absent.status == ClockStatus::kUnknown);
  CHECK(absent.last_error == ErrorReason::kMissing);
  CHECK_FALSE(absent.port_state);
  CHECK(s.error_count(SourceKind::kPtp4l, ErrorReason::kMissing) == 1);
  CHECK(s.phc.empty());
  CHECK(s.timex.has_value());
  // ptp4l processes another sync: new ingress_time.
  auto ts = std::get<ptp::TimeStatusNp>(skewscope::clocks::testing::captured_body(ptp::ManagementId::kTimeStatusNp));
  ts.ingress_time_ns += 1'000'000'000;
  server.set_time_status(ts);
  m.poll();
  const ClockSnapshot s2 = m.snapshot();
  CHECK(s2.error_count(SourceKind::kPtp4l, ErrorReason::kMissing) == 2);
  REQUIRE(s2.error_bound_seconds);
  CHECK(*s2.error_bound_seconds >= std::fabs(*p.master_offset_seconds) + *p.mean_path_delay_seconds);
  REQUIRE(s2.ptp[0].last_sync_age_seconds);
  CHECK(*s2.ptp[0].last_sync_age_seconds < 1.0);
}

TEST_CASE("the monitor with no configured socket probes the default paths quietly") {
  bool any_default = false;
  for (const auto& p : default_ptp4l_sockets()) {
    struct stat st {};
    any_default |= ::stat(p.c_str(), &st) == 0;
  }
  if (any_default) return;  // a real ptp4l runs here; nothing to assert about its absence
  ClockMonitor m(ClockConfig{});
  m.poll();
  const ClockSnapshot s = m.snapshot();
  CHECK(s.ptp.empty());
  for (std::size_t r = 0; r < kErrorReasonCount; ++r)
    CHECK(s.error_count(SourceKind::kPtp4l, static_cast<ErrorReason>(r)) == 0);
  CHECK(s.bound_source == "timex");
}
