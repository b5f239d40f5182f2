#include "clocks/clock_monitor.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace skewscope::clocks {
namespace {

Ptp4lClient make_client(const ClockConfig& cfg, const std::string& socket) {
  Ptp4lClient::Options o;
  o.server_path = socket;
  o.client_dir = cfg.client_dir;
  o.timeout = cfg.reply_timeout;
  o.domain = cfg.ptp_domain;
  return Ptp4lClient(std::move(o));
}

}  // namespace

std::string_view to_string(SourceKind k) {
  switch (k) {
    case SourceKind::kPtp4l: return "ptp4l";
    case SourceKind::kPhc: return "phc";
    case SourceKind::kTimex: return "timex";
  }
  return "ptp4l";
}

ClockMonitor::ClockMonitor(ClockConfig cfg) : cfg_(std::move(cfg)), probing_(cfg_.ptp4l_sockets.empty()) {
  bound_cfg_.max_drift_ppm = cfg_.max_drift_ppm;
  bound_cfg_.stale_after = cfg_.stale_after;
  for (const auto& s : cfg_.ptp4l_sockets) sources_.push_back(Source{s, make_client(cfg_, s), {}, {}, 0});
  snap_.max_drift_ppm = cfg_.max_drift_ppm;
  snap_.stale_after_seconds = std::chrono::duration<double>(cfg_.stale_after).count();
}

ClockMonitor::~ClockMonitor() = default;

void ClockMonitor::add_error(SourceKind kind, ErrorReason reason, std::uint64_t n) {
  errors_[static_cast<std::size_t>(kind)][static_cast<std::size_t>(reason)] += n;
}

// Probing: a default path joins the poll list once a socket shows up there and stays (so that
// its disappearance is seen and counted); paths that never existed cost one stat() and no error,
// since most hosts run no ptp4l at all.
void ClockMonitor::refresh_probed_sources() {
  for (const auto& path : default_ptp4l_sockets()) {
    const bool known = std::any_of(sources_.begin(), sources_.end(), [&](const Source& s) { return s.socket == path; });
    if (known) continue;
    struct stat st {};
    const bool present = ::stat(path.c_str(), &st) == 0 ? S_ISSOCK(st.st_mode) : (errno == EACCES);
    if (present) sources_.push_back(Source{path, make_client(cfg_, path), {}, {}, 0});
  }
}

PtpSocketSnapshot ClockMonitor::snapshot_of(const Source& s, SteadyTime now) const {
  PtpSocketSnapshot o;
  o.socket = s.socket;
  o.last_error = s.last_error;
  o.last_errno = s.last_errno;
  const PtpAssessment a = s.tracker.assess(now, bound_cfg_);
  o.status = a.status;
  o.fresh = a.fresh;
  o.serving = a.serving;
  o.error_bound_seconds = a.bound_seconds;
  o.last_sync_age_seconds = a.last_sync_age_seconds;
  o.data_age_seconds = a.data_age_seconds;
  const auto& r = s.tracker.last_reading();
  if (!a.fresh || !r) return o;  // a quiet source's old values are withdrawn
  // Without a grandmaster other than itself ptp4l reports zeros for offset and delay: nothing
  // was measured, so nothing is exported.
  const bool gm = r->time_status && r->time_status->gm_present;
  if (r->time_status) {
    o.gm_present = gm;
    if (gm) o.master_offset_seconds = static_cast<double>(r->time_status->master_offset_ns) / 1e9;
    o.gm_identity = ptp::to_string(r->time_status->gm_identity);
  }
  if (r->current) {
    if (gm) {
      o.mean_path_delay_seconds = ptp::scaled_ns_to_seconds(r->current->mean_path_delay_scaled);
      o.offset_from_master_seconds = ptp::scaled_ns_to_seconds(r->current->offset_from_master_scaled);
    }
    o.steps_removed = r->current->steps_removed;
  }
  if (r->parent) {
    o.gm_clock_class = r->parent->grandmaster_clock_quality.clock_class;
    o.gm_clock_accuracy = r->parent->grandmaster_clock_quality.clock_accuracy;
  }
  if (const auto* port = primary_port(*r)) o.port_state = port->port_state;
  o.port_count = static_cast<int>(r->ports.size());
  return o;
}

void ClockMonitor::poll() {
  // Kernel clock first: it never blocks.
  std::optional<TimexReading> timex;
  std::optional<ErrorReason> timex_error;
  auto t = read_kernel_clock();
  if (t) {
    timex = *t;
  } else {
    timex_error = reason_from_errno(t.error);
    add_error(SourceKind::kTimex, *timex_error);
  }

  std::vector<PhcReading> phcs;
  for (const auto& clock : list_phcs(cfg_.phc_sysfs_dir)) {
    phcs.push_back(read_phc(clock, cfg_.phc_sysfs_dir, cfg_.phc_dev_dir));
    if (phcs.back().error) add_error(SourceKind::kPhc, *phcs.back().error);
  }

  if (probing_) refresh_probed_sources();
  for (auto& s : sources_) {
    QueryResult q = s.client.query();
    for (std::size_t i = 0; i < kErrorReasonCount; ++i)
      if (q.errors.by_reason[i]) add_error(SourceKind::kPtp4l, static_cast<ErrorReason>(i), q.errors.by_reason[i]);
    s.last_error = q.error;
    s.last_errno = q.sys_errno;
    // Partial answers still count when they hold what the status needs (a timed-out
    // PARENT_DATA_SET only loses the GM accuracy term).
    s.tracker.on_reading(q.reading, std::chrono::steady_clock::now());
  }

  const SteadyTime now = std::chrono::steady_clock::now();
  ClockSnapshot snap;
  snap.polled = true;
  snap.max_drift_ppm = cfg_.max_drift_ppm;
  snap.stale_after_seconds = std::chrono::duration<double>(cfg_.stale_after).count();
  std::vector<NamedPtpAssessment> named;
  for (const auto& s : sources_) {
    snap.ptp.push_back(snapshot_of(s, now));
    named.push_back({s.socket, s.tracker.assess(now, bound_cfg_)});
  }
  HostAssessment host = combine(named, assess_kernel(timex));
  // The assessments already withdraw insane bounds; this keeps the published pair (status,
  // bound) consistent whatever combine() is given: no "synchronized" without a sane bound claim.
  if (host.bound_seconds && !is_sane_bound(*host.bound_seconds)) {
    host.bound_seconds.reset();
    if (host.status != ClockStatus::kDisrupted) host.status = ClockStatus::kUnknown;
  }
  snap.status = host.status;
  snap.error_bound_seconds = host.bound_seconds;
  snap.bound_source = host.source;
  snap.phc = std::move(phcs);
  snap.timex = timex;
  snap.timex_error = timex_error;
  snap.errors = errors_;

  std::lock_guard lock(mu_);
  snap_ = std::move(snap);
}

ClockSnapshot ClockMonitor::snapshot() const {
  std::lock_guard lock(mu_);
  return snap_;
}

}  // namespace skewscope::clocks
