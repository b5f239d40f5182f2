#include "clocks/render.hpp"

#include <cmath>
#include <cstdio>
#include <span>

#include "clocks/ptp_management.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope::clocks {
namespace {

// Reasons that can occur per source: these series are exported (at 0) from the start, so a rate()
// over them works before the first failure. Any other non-zero pair is exported as well.
constexpr ErrorReason kPtpReasons[] = {
    ErrorReason::kMissing,   ErrorReason::kRefused,         ErrorReason::kPermission,      ErrorReason::kTimeout,
    ErrorReason::kMalformed, ErrorReason::kManagementError, ErrorReason::kUnexpectedReply, ErrorReason::kIo};
constexpr ErrorReason kPhcReasons[] = {ErrorReason::kMissing, ErrorReason::kPermission, ErrorReason::kUnsupported,
                                       ErrorReason::kIo};
constexpr ErrorReason kTimexReasons[] = {ErrorReason::kIo};

bool always_exported(SourceKind k, ErrorReason r) {
  std::span<const ErrorReason> list;
  switch (k) {
    case SourceKind::kPtp4l: list = kPtpReasons; break;
    case SourceKind::kPhc: list = kPhcReasons; break;
    case SourceKind::kTimex: list = kTimexReasons; break;
  }
  for (auto x : list)
    if (x == r) return true;
  return false;
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json opt_reason(const std::optional<ErrorReason>& r) {
  return r ? nlohmann::json(std::string(to_string(*r))) : nlohmann::json(nullptr);
}

std::string fmt_seconds(const std::optional<double>& v) {
  if (!v) return "-";
  const double a = std::fabs(*v);
  char buf[48];
  if (a == 0)
    std::snprintf(buf, sizeof buf, "0");
  else if (a < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0fns", *v * 1e9);
  else if (a < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3gus", *v * 1e6);
  else if (a < 1)
    std::snprintf(buf, sizeof buf, "%.3gms", *v * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3gs", *v);
  return buf;
}

}  // namespace

void append_prometheus(const ClockSnapshot& s, std::string& out) {
  using namespace std::string_view_literals;
  PrometheusWriter w(out);
  struct PtpFamily {
    std::string_view name, help;
    std::optional<double> (*get)(const PtpSocketSnapshot&);
  };
  const PtpFamily ptp_families[] = {
      {"skewscope_ptp_master_offset_seconds"sv,
       "ptp4l TIME_STATUS_NP master_offset: this clock minus the master at the last sync."sv,
       [](const PtpSocketSnapshot& p) { return p.master_offset_seconds; }},
      {"skewscope_ptp_mean_path_delay_seconds"sv, "ptp4l CURRENT_DATA_SET meanPathDelay (one-way)."sv,
       [](const PtpSocketSnapshot& p) { return p.mean_path_delay_seconds; }},
      {"skewscope_ptp_port_state"sv,
       "linuxptp port state: 1 INITIALIZING, 2 FAULTY, 3 DISABLED, 4 LISTENING, 5 PRE_MASTER, 6 MASTER, 7 PASSIVE, "
       "8 UNCALIBRATED, 9 SLAVE, 10 GRAND_MASTER (the slave port when there is one)."sv,
       [](const PtpSocketSnapshot& p) -> std::optional<double> {
         if (!p.port_state) return std::nullopt;
         return *p.port_state;
       }},
      {"skewscope_ptp_gm_present"sv,
       "1 when ptp4l follows a grandmaster other than itself (TIME_STATUS_NP gmPresent)."sv,
       [](const PtpSocketSnapshot& p) -> std::optional<double> {
         if (!p.gm_present) return std::nullopt;
         return *p.gm_present ? 1.0 : 0.0;
       }},
      {"skewscope_ptp_last_sync_age_seconds"sv, "Time since the agent saw ptp4l's last sync ingress time change."sv,
       [](const PtpSocketSnapshot& p) { return p.last_sync_age_seconds; }},
  };
  for (const auto& f : ptp_families) {
    w.family(f.name, "gauge", f.help);
    for (const auto& p : s.ptp)
      if (auto v = f.get(p)) w.sample(f.name, {{"socket", p.socket}}, *v);
  }

  w.family("skewscope_phc_system_offset_seconds", "gauge",
           "System clock minus PTP hardware clock, from the shortest-interval sample.");
  for (const auto& p : s.phc)
    if (p.offset) w.sample("skewscope_phc_system_offset_seconds", {{"clock", p.clock}}, p.offset->offset_ns / 1e9);

  w.family("skewscope_timex_maxerror_seconds", "gauge", "Maximum error of the kernel clock (adjtimex maxerror).");
  if (s.timex) w.sample("skewscope_timex_maxerror_seconds", s.timex->maxerror_seconds);
  w.family("skewscope_timex_sync_status", "gauge",
           "1 when adjtimex does not report TIME_ERROR (kernel clock synchronized).");
  if (s.timex) w.sample("skewscope_timex_sync_status", s.timex->sync_status);

  w.family("skewscope_clock_error_bound_seconds", "gauge",
           "Half-width of the interval that holds this host's clock error (formula in agent/clocks/README.md).");
  if (s.error_bound_seconds) w.sample("skewscope_clock_error_bound_seconds", *s.error_bound_seconds);
  w.family("skewscope_clock_status", "gauge",
           "Host clock status: 0 unknown, 1 synchronized, 2 free_running, 3 disrupted.");
  w.sample("skewscope_clock_status", static_cast<double>(s.status));

  w.family("skewscope_clock_source_errors_total", "counter", "Failed clock-source reads, by source and reason.");
  for (std::size_t k = 0; k < kSourceKindCount; ++k) {
    for (std::size_t r = 0; r < kErrorReasonCount; ++r) {
      const auto kind = static_cast<SourceKind>(k);
      const auto reason = static_cast<ErrorReason>(r);
      const auto n = s.errors[k][r];
      if (n == 0 && !always_exported(kind, reason)) continue;
      w.sample("skewscope_clock_source_errors_total", {{"source", to_string(kind)}, {"reason", to_string(reason)}},
               static_cast<double>(n));
    }
  }
}

nlohmann::json to_json(const ClockSnapshot& s) {
  nlohmann::json j;
  j["status"] = std::string(to_string(s.status));
  j["error_bound_seconds"] = opt(s.error_bound_seconds);
  j["bound_source"] = s.bound_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.bound_source);
  j["max_drift_ppm"] = s.max_drift_ppm;
  j["stale_after_seconds"] = s.stale_after_seconds;
  auto& ptp = j["ptp4l"] = nlohmann::json::array();
  for (const auto& p : s.ptp) {
    ptp.push_back({
        {"socket", p.socket},
        {"status", std::string(to_string(p.status))},
        {"fresh", p.fresh},
        {"serving", p.serving},
        {"error", opt_reason(p.last_error)},
        {"master_offset_seconds", opt(p.master_offset_seconds)},
        {"mean_path_delay_seconds", opt(p.mean_path_delay_seconds)},
        {"offset_from_master_seconds", opt(p.offset_from_master_seconds)},
        {"port_state", opt(p.port_state)},
        {"port_state_name", p.port_state
                                ? nlohmann::json(ptp::port_state_name(static_cast<std::uint8_t>(*p.port_state)))
                                : nlohmann::json(nullptr)},
        {"port_count", opt(p.port_count)},
        {"gm_present", opt(p.gm_present)},
        {"gm_identity", opt(p.gm_identity)},
        {"steps_removed", opt(p.steps_removed)},
        {"gm_clock_class", opt(p.gm_clock_class)},
        {"gm_clock_accuracy", opt(p.gm_clock_accuracy)},
        {"last_sync_age_seconds", opt(p.last_sync_age_seconds)},
        {"data_age_seconds", opt(p.data_age_seconds)},
        {"error_bound_seconds", opt(p.error_bound_seconds)},
    });
  }
  auto& phc = j["phc"] = nlohmann::json::array();
  for (const auto& p : s.phc) {
    phc.push_back({
        {"clock", p.clock},
        {"name", p.name},
        {"system_offset_seconds", p.offset ? nlohmann::json(p.offset->offset_ns / 1e9) : nlohmann::json(nullptr)},
        {"interval_seconds", p.offset ? nlohmann::json(p.offset->interval_ns / 1e9) : nlohmann::json(nullptr)},
        {"method", p.method ? nlohmann::json(to_string(*p.method)) : nlohmann::json(nullptr)},
        {"error", opt_reason(p.error)},
    });
  }
  if (s.timex) {
    const auto& t = *s.timex;
    j["timex"] = {
        {"offset_seconds", t.offset_seconds},
        {"frequency_ppm", t.frequency_ppm},
        {"maxerror_seconds", t.maxerror_seconds},
        {"esterror_seconds", t.esterror_seconds},
        {"status", t.status},
        {"unsync", t.unsync},
        {"clock_error", t.clock_error},
        {"tai_offset_seconds", t.tai_offset_seconds},
        {"sync_status", t.sync_status},
        {"state", t.state},
    };
  } else {
    j["timex"] = nullptr;
  }
  auto& errors = j["errors"] = nlohmann::json::object();
  for (std::size_t k = 0; k < kSourceKindCount; ++k) {
    auto& e = errors[std::string(to_string(static_cast<SourceKind>(k)))] = nlohmann::json::object();
    for (std::size_t r = 0; r < kErrorReasonCount; ++r)
      if (s.errors[k][r] || always_exported(static_cast<SourceKind>(k), static_cast<ErrorReason>(r)))
        e[std::string(to_string(static_cast<ErrorReason>(r)))] = s.errors[k][r];
  }
  return j;
}

std::string render_table(const ClockSnapshot& s) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "host clock: %s  error bound: %s  source: %s  (max drift %g ppm, stale after %gs)\n",
                std::string(to_string(s.status)).c_str(), fmt_seconds(s.error_bound_seconds).c_str(),
                s.bound_source.empty() ? "-" : s.bound_source.c_str(), s.max_drift_ppm, s.stale_after_seconds);
  out += line;
  out += "\nptp4l:\n";
  if (s.ptp.empty()) out += "  (no ptp4l socket found)\n";
  for (const auto& p : s.ptp) {
    std::snprintf(
        line, sizeof line,
        "  %s\n    status %-12s port %-12s gm %-3s offset %-9s delay %-9s sync age %-8s bound %-9s error %s\n",
        p.socket.c_str(), std::string(to_string(p.status)).c_str(),
        p.port_state ? ptp::port_state_name(static_cast<std::uint8_t>(*p.port_state)) : "-",
        p.gm_present ? (*p.gm_present ? "yes" : "no") : "-", fmt_seconds(p.master_offset_seconds).c_str(),
        fmt_seconds(p.mean_path_delay_seconds).c_str(), fmt_seconds(p.last_sync_age_seconds).c_str(),
        fmt_seconds(p.error_bound_seconds).c_str(), p.last_error ? std::string(to_string(*p.last_error)).c_str() : "-");
    out += line;
  }
  out += "\nPHC:\n";
  if (s.phc.empty()) out += "  (none)\n";
  for (const auto& p : s.phc) {
    std::snprintf(line, sizeof line, "  %-6s %-16s offset %-9s interval %-9s method %-8s error %s\n", p.clock.c_str(),
                  p.name.c_str(),
                  fmt_seconds(p.offset ? std::optional<double>(p.offset->offset_ns / 1e9) : std::nullopt).c_str(),
                  fmt_seconds(p.offset ? std::optional<double>(p.offset->interval_ns / 1e9) : std::nullopt).c_str(),
                  p.method ? to_string(*p.method) : "-", p.error ? std::string(to_string(*p.error)).c_str() : "-");
    out += line;
  }
  out += "\nkernel (adjtimex):\n";
  if (s.timex) {
    const auto& t = *s.timex;
    std::snprintf(line, sizeof line,
                  "  sync %s  offset %s  freq %+.3f ppm  maxerror %s  esterror %s  status 0x%04x%s  tai %d s\n",
                  t.sync_status ? "yes" : "no", fmt_seconds(t.offset_seconds).c_str(), t.frequency_ppm,
                  fmt_seconds(t.maxerror_seconds).c_str(), fmt_seconds(t.esterror_seconds).c_str(), t.status,
                  t.unsync ? " (UNSYNC)" : "", t.tai_offset_seconds);
    out += line;
  } else {
    out += "  unavailable";
    if (s.timex_error) out.append(" (").append(to_string(*s.timex_error)).append(")");
    out += "\n";
  }
  return out;
}

}  // namespace skewscope::clocks
