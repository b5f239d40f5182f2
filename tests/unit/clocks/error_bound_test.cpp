// Error bound and status with time as an input: growth with sync age, decay to unknown when the
// source goes quiet, free_running slaves, masters deferring to the kernel.
#include "clocks/error_bound.hpp"

#include <doctest/doctest.h>
#include <limits>
#include <vector>

using namespace skewscope::clocks;
using namespace std::chrono_literals;

namespace {

const SteadyTime t0{std::chrono::seconds(1000)};

Ptp4lReading reading(std::uint8_t port_state, bool gm, std::int64_t offset_ns, double delay_ns,
                     std::int64_t ingress = 1'700'000'000'000'000'000) {
  Ptp4lReading r;
  ptp::TimeStatusNp t;
  t.master_offset_ns = offset_ns;
  t.ingress_time_ns = ingress;
  t.gm_present = gm;
  r.time_status = t;
  ptp::PortDataSet p;
  p.port_identity.port_number = 1;
  p.port_state = port_state;
  r.ports.push_back(p);
  ptp::CurrentDataSet c;
  c.steps_removed = 1;
  c.mean_path_delay_scaled = static_cast<std::int64_t>(delay_ns * 65536);
  r.current = c;
  ptp::ParentDataSet pd;
  pd.grandmaster_clock_quality.clock_accuracy = 0xFE;  // unknown: adds nothing
  r.parent = pd;
  return r;
}

// What a freshly started agent sees from a ptp4l that has been running a while: the delay known
// and a sync after it (two readings, the second with a new ingress_time, both at `t`).
void first(PtpSourceTracker& tr, Ptp4lReading r, SteadyTime t) {
  r.time_status->ingress_time_ns -= 1;
  tr.on_reading(r, t);
  r.time_status->ingress_time_ns += 1;
  tr.on_reading(r, t);
}

constexpr std::uint8_t kSlave = 9, kUncal = 8, kMaster = 6, kFaulty = 2, kListening = 4;

BoundConfig cfg() { return BoundConfig{100, 5s}; }

TimexReading make_timex(bool synced, double maxerror_s, double offset_s = 0) {
  RawTimex raw;
  raw.maxerror = static_cast<long long>(maxerror_s * 1e6);
  raw.offset = static_cast<long long>(offset_s * 1e6);
  raw.status = synced ? 0 : 0x40;
  raw.state = synced ? 0 : 5;
  return interpret_timex(raw);
}

}  // namespace

TEST_CASE("a fresh SLAVE is synchronized; its bound is |offset| + delay, then grows with sync age") {
  PtpSourceTracker tr;
  first(tr, reading(kSlave, true, -1000, 2000), t0);
  auto a = tr.assess(t0, cfg());
  CHECK(a.status == ClockStatus::kSynchronized);
  REQUIRE(a.bound_seconds);
  CHECK(*a.bound_seconds == doctest::Approx(3e-6));
  // No new sync for 2 s, answers keep coming: + 100 ppm × 2 s.
  tr.on_reading(reading(kSlave, true, -1000, 2000), t0 + 2s);
  a = tr.assess(t0 + 2s, cfg());
  CHECK(a.status == ClockStatus::kSynchronized);
  CHECK(*a.last_sync_age_seconds == doctest::Approx(2.0));
  CHECK(*a.data_age_seconds == doctest::Approx(0.0));
  CHECK(*a.bound_seconds == doctest::Approx(3e-6 + 200e-6));
  // A new sync (ingress_time changed) resets the age.
  tr.on_reading(reading(kSlave, true, 500, 2000, 1'700'000'003'000'000'000), t0 + 3s);
  a = tr.assess(t0 + 3s, cfg());
  CHECK(*a.last_sync_age_seconds == doctest::Approx(0.0));
  CHECK(*a.bound_seconds == doctest::Approx(2.5e-6));
}

TEST_CASE("a quiet source decays to unknown after stale_after, values withdrawn") {
  PtpSourceTracker tr;
  first(tr, reading(kSlave, true, 100, 1000), t0);
  auto a = tr.assess(t0 + 5s, cfg());
  CHECK(a.status == ClockStatus::kSynchronized);  // exactly at the threshold: still fresh
  a = tr.assess(t0 + 5001ms, cfg());
  CHECK(a.status == ClockStatus::kUnknown);
  CHECK_FALSE(a.fresh);
  CHECK(a.ever_answered);
  CHECK_FALSE(a.bound_seconds);
  REQUIRE(a.last_sync_age_seconds);  // still true, and still growing
  CHECK(*a.last_sync_age_seconds == doctest::Approx(5.001));
  // While answers keep coming, the sync age is judged at the last answer: quiet for 4 s after an
  // answer that came 4 s after the last sync is still synchronized, with 8 s of drift.
  PtpSourceTracker tr2;
  first(tr2, reading(kSlave, true, 100, 1000), t0);
  tr2.on_reading(reading(kSlave, true, 100, 1000), t0 + 4s);
  a = tr2.assess(t0 + 8s, cfg());
  CHECK(a.status == ClockStatus::kSynchronized);
  CHECK(*a.bound_seconds == doctest::Approx(1.1e-6 + 800e-6));
  // A shorter stale_after decays sooner.
  a = tr.assess(t0 + 1500ms, BoundConfig{100, 1s});
  CHECK(a.status == ClockStatus::kUnknown);
}

TEST_CASE("a free-running slave (UNCALIBRATED, gm present) is free_running, not a failure") {
  PtpSourceTracker tr;
  first(tr, reading(kUncal, true, 40'000, 2500), t0);
  const auto a = tr.assess(t0 + 500ms, cfg());
  CHECK(a.status == ClockStatus::kFreeRunning);
  CHECK(*a.bound_seconds == doctest::Approx(40e-6 + 2.5e-6 + 100e-6 * 0.5));
}

TEST_CASE("answers without a fresh sync are disrupted, with a holdover bound while the sync is recent") {
  PtpSourceTracker tr;
  first(tr, reading(kSlave, true, 1000, 1000), t0);
  // The port faults one second later; ingress_time unchanged.
  tr.on_reading(reading(kFaulty, true, 1000, 1000), t0 + 1s);
  auto a = tr.assess(t0 + 1s, cfg());
  CHECK(a.status == ClockStatus::kDisrupted);
  REQUIRE(a.bound_seconds);
  CHECK(*a.bound_seconds == doctest::Approx(2e-6 + 100e-6));
  // Still answering, but the last sync is now older than stale_after: no bound any more.
  tr.on_reading(reading(kFaulty, true, 1000, 1000), t0 + 6s);
  a = tr.assess(t0 + 6s, cfg());
  CHECK(a.status == ClockStatus::kDisrupted);
  CHECK_FALSE(a.bound_seconds);
  // A SLAVE port whose syncs stopped (same ingress_time) is disrupted as well.
  PtpSourceTracker tr2;
  first(tr2, reading(kSlave, true, 1000, 1000), t0);
  tr2.on_reading(reading(kSlave, true, 1000, 1000), t0 + 6s);
  CHECK(tr2.assess(t0 + 6s, cfg()).status == ClockStatus::kDisrupted);
  // A FAULTY port is disrupted even if it never synced.
  PtpSourceTracker tr3;
  tr3.on_reading(reading(kFaulty, false, 0, 0, 0), t0);
  a = tr3.assess(t0, cfg());
  CHECK(a.status == ClockStatus::kDisrupted);
  CHECK_FALSE(a.bound_seconds);
  CHECK_FALSE(a.last_sync_age_seconds);
}

TEST_CASE("a ptp4l that has not measured anything yet is unknown, not disrupted") {
  // Starting up: LISTENING, no grandmaster, no sync.
  PtpSourceTracker tr;
  tr.on_reading(reading(kListening, false, 0, 0, 0), t0);
  auto a = tr.assess(t0, cfg());
  CHECK(a.status == ClockStatus::kUnknown);
  CHECK(a.fresh);
  // Grandmaster just selected (UNCALIBRATED, gmPresent) but no sync processed: ingress_time 0.
  tr.on_reading(reading(kUncal, true, 0, 0, 0), t0 + 1s);
  CHECK(tr.assess(t0 + 1s, cfg()).status == ClockStatus::kUnknown);
  // First sync, delay not measured yet (ptp4l reports 0): free_running, bound unknown.
  tr.on_reading(reading(kUncal, true, 0, 0), t0 + 2s);
  a = tr.assess(t0 + 2s, cfg());
  CHECK(a.status == ClockStatus::kFreeRunning);
  CHECK_FALSE(a.bound_seconds);
  // Delay measured, but master_offset is still the 0 from before: bound still unknown.
  tr.on_reading(reading(kUncal, true, 0, 2000, 1'700'000'001'000'000'000), t0 + 3s);
  CHECK_FALSE(tr.assess(t0 + 3s, cfg()).bound_seconds);
  // The next sync computes the offset: the bound appears.
  tr.on_reading(reading(kUncal, true, 300, 2000, 1'700'000'002'000'000'000), t0 + 3500ms);
  a = tr.assess(t0 + 3500ms, cfg());
  REQUIRE(a.bound_seconds);
  CHECK(*a.bound_seconds == doctest::Approx(2.3e-6));
  // Losing the grandmaster after having synced is a disruption.
  tr.on_reading(reading(kListening, false, 0, 2000, 1'700'000'002'000'000'000), t0 + 4s);
  a = tr.assess(t0 + 4s, cfg());
  CHECK(a.status == ClockStatus::kDisrupted);
  REQUIRE(a.bound_seconds);  // holdover from the last good reading, 0.5 s old
  CHECK(*a.bound_seconds == doctest::Approx(2.3e-6 + 50e-6));
  // ptp4l restarted: the delay is 0 again, and so is the trust in the offset.
  tr.on_reading(reading(kUncal, true, 0, 0, 1'700'000'005'000'000'000), t0 + 4500ms);
  CHECK_FALSE(tr.assess(t0 + 4500ms, cfg()).bound_seconds);
}

TEST_CASE("a master serves; its status comes from the kernel") {
  PtpSourceTracker tr;
  tr.on_reading(reading(kMaster, false, 0, 0, 0), t0);
  const auto a = tr.assess(t0, cfg());
  CHECK(a.serving);
  CHECK(a.status == ClockStatus::kUnknown);
  const NamedPtpAssessment named[] = {{"/run/ptp4l", a}};
  const auto host = combine(named, assess_kernel(make_timex(true, 0.002, 0.0001)));
  CHECK(host.status == ClockStatus::kSynchronized);
  CHECK(host.source == "timex");
  CHECK(*host.bound_seconds == doctest::Approx(0.0021));
}

TEST_CASE("incomplete answers do not count; a missing delay leaves the bound unknown") {
  PtpSourceTracker tr;
  Ptp4lReading r = reading(kSlave, true, 100, 100);
  r.ports.clear();
  tr.on_reading(r, t0);
  CHECK_FALSE(tr.assess(t0, cfg()).ever_answered);
  r = reading(kSlave, true, 100, 100);
  r.current.reset();
  tr.on_reading(r, t0);
  const auto a = tr.assess(t0, cfg());
  CHECK(a.status == ClockStatus::kSynchronized);
  CHECK_FALSE(a.bound_seconds);
}

TEST_CASE("the grandmaster's declared accuracy adds to the bound") {
  PtpSourceTracker tr;
  Ptp4lReading r = reading(kSlave, true, 0, 1);
  r.parent->grandmaster_clock_quality.clock_accuracy = 0x21;  // within 100 ns
  first(tr, r, t0);
  CHECK(*tr.assess(t0, cfg()).bound_seconds == doctest::Approx(101e-9));
  CHECK(*clock_accuracy_seconds(0x17) == doctest::Approx(1e-12));
  CHECK(*clock_accuracy_seconds(0x20) == doctest::Approx(25e-9));
  CHECK(*clock_accuracy_seconds(0x23) == doctest::Approx(1e-6));
  CHECK(*clock_accuracy_seconds(0x29) == doctest::Approx(1e-3));
  CHECK(*clock_accuracy_seconds(0x2F) == doctest::Approx(1.0));
  CHECK(*clock_accuracy_seconds(0x30) == doctest::Approx(10.0));
  CHECK_FALSE(clock_accuracy_seconds(0x31));
  CHECK_FALSE(clock_accuracy_seconds(0xFE));
  CHECK_FALSE(clock_accuracy_seconds(0x00));
}

TEST_CASE("kernel assessment follows adjtimex") {
  CHECK(assess_kernel(std::nullopt).status == ClockStatus::kUnknown);
  auto k = assess_kernel(make_timex(true, 0.001, -0.0005));
  CHECK(k.status == ClockStatus::kSynchronized);
  CHECK(*k.bound_seconds == doctest::Approx(0.0015));
  k = assess_kernel(make_timex(false, 0.5));
  CHECK(k.status == ClockStatus::kFreeRunning);
  CHECK(*k.bound_seconds == doctest::Approx(0.5));
  k = assess_kernel(make_timex(false, 16.0));  // the kernel's cap: nobody knows
  CHECK(k.status == ClockStatus::kUnknown);
  CHECK_FALSE(k.bound_seconds);
}

TEST_CASE("combine: clients first, smallest bound; then disrupted; quiet ptp4l beats the kernel") {
  const auto kernel = assess_kernel(make_timex(true, 0.001));
  PtpAssessment sync;
  sync.status = ClockStatus::kSynchronized;
  sync.fresh = sync.ever_answered = true;
  sync.bound_seconds = 5e-6;
  PtpAssessment freerun = sync;
  freerun.status = ClockStatus::kFreeRunning;
  freerun.bound_seconds = 2e-6;
  PtpAssessment disrupted = sync;
  disrupted.status = ClockStatus::kDisrupted;
  disrupted.bound_seconds.reset();
  PtpAssessment quiet;
  quiet.ever_answered = true;
  PtpAssessment never;

  {
    const NamedPtpAssessment s[] = {{"a", sync}, {"b", freerun}, {"c", disrupted}};
    const auto h = combine(s, kernel);
    CHECK(h.status == ClockStatus::kFreeRunning);
    CHECK(h.source == "ptp4l:b");
    CHECK(*h.bound_seconds == doctest::Approx(2e-6));
  }
  {
    const NamedPtpAssessment s[] = {{"q", quiet}, {"c", disrupted}};
    const auto h = combine(s, kernel);
    CHECK(h.status == ClockStatus::kDisrupted);
    CHECK_FALSE(h.bound_seconds);
  }
  {
    const NamedPtpAssessment s[] = {{"q", quiet}};
    const auto h = combine(s, kernel);
    CHECK(h.status == ClockStatus::kUnknown);
    CHECK(h.source == "ptp4l:q");
  }
  {
    const NamedPtpAssessment s[] = {{"n", never}};
    CHECK(combine(s, kernel).source == "timex");
    CHECK(combine({}, kernel).status == ClockStatus::kSynchronized);
  }
}

TEST_CASE("primary port: SLAVE, else UNCALIBRATED, else the first") {
  Ptp4lReading r;
  CHECK(primary_port(r) == nullptr);
  ptp::PortDataSet p;
  p.port_state = kMaster;
  r.ports.push_back(p);
  p.port_state = kUncal;
  r.ports.push_back(p);
  CHECK(primary_port(r)->port_state == kUncal);
  p.port_state = kSlave;
  r.ports.push_back(p);
  CHECK(primary_port(r)->port_state == kSlave);
  r.ports.resize(1);
  CHECK(primary_port(r)->port_state == kMaster);
}

TEST_CASE("a master_offset near INT64_MIN is no bound: unknown, null, never the holdover base") {
  const std::int64_t hostile = std::numeric_limits<std::int64_t>::min() + 1;
  PtpSourceTracker tr;
  first(tr, reading(kSlave, true, hostile, 1000), t0);
  auto a = tr.assess(t0, cfg());
  CHECK(a.status == ClockStatus::kUnknown);  // was "synchronized" with 292 years
  CHECK_FALSE(a.bound_seconds);
  // Faulting right after: disrupted, but the insane reading was not kept for holdover.
  tr.on_reading(reading(kFaulty, true, hostile, 1000), t0 + 1s);
  a = tr.assess(t0 + 1s, cfg());
  CHECK(a.status == ClockStatus::kDisrupted);
  CHECK_FALSE(a.bound_seconds);
  // The host follows: nothing synchronized to pick, so the disrupted source speaks, bound null.
  const std::vector<NamedPtpAssessment> named{{"/var/run/ptp4l", tr.assess(t0 + 1s, cfg())}};
  const auto host = combine(named, assess_kernel(std::nullopt));
  CHECK(host.status == ClockStatus::kDisrupted);
  CHECK_FALSE(host.bound_seconds);
  // Just inside the limit is still a (poor) measurement.
  PtpSourceTracker ok;
  first(ok, reading(kSlave, true, 86'000'000'000'000, 1000), t0);
  a = ok.assess(t0, cfg());
  CHECK(a.status == ClockStatus::kSynchronized);
  REQUIRE(a.bound_seconds);
  CHECK(*a.bound_seconds == doctest::Approx(86000.0));
}

TEST_CASE("a kernel bound beyond a day is unknown") {
  auto k = assess_kernel(make_timex(true, 0.001, 1e6));
  CHECK(k.status == ClockStatus::kUnknown);
  CHECK_FALSE(k.bound_seconds);
}

TEST_CASE("bound seconds to ns: checked, never negative, null beyond sane") {
  CHECK_FALSE(bound_seconds_to_ns(std::nullopt));
  CHECK(*bound_seconds_to_ns(1.5e-6) == 1500);
  CHECK(*bound_seconds_to_ns(0.0) == 0);
  CHECK(*bound_seconds_to_ns(kMaxSaneBoundSeconds) == 86'400'000'000'000);
  for (double bad : {-1e-9, 86400.001, 9.2e9, 1e300, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    INFO(bad);
    CHECK_FALSE(bound_seconds_to_ns(bad));
  }
}
