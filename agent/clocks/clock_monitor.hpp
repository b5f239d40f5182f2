// The clock-quality stage: polls ptp4l instances, PHCs and the kernel clock, and keeps the
// latest ClockSnapshot (readings, host error bound and status, error counters) for the agent.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clocks/clock_snapshot.hpp"
#include "clocks/error_bound.hpp"
#include "clocks/ptp4l_client.hpp"
#include "clocks/render.hpp"

namespace skewscope::clocks {

struct ClockConfig {
  std::vector<std::string> ptp4l_sockets;  // --ptp4l-socket; empty = probe default_ptp4l_sockets()
  double max_drift_ppm = 100;
  std::chrono::milliseconds stale_after{5000};
  std::chrono::milliseconds reply_timeout{200};  // per ptp4l socket and poll
  std::string client_dir = "/var/run";           // where reply sockets are bound
  std::uint8_t ptp_domain = 0;                   // ptp4l's domainNumber
  std::string phc_sysfs_dir = "/sys/class/ptp";
  std::string phc_dev_dir = "/dev";
};

class ClockMonitor {
 public:
  explicit ClockMonitor(ClockConfig cfg);
  ~ClockMonitor();
  ClockMonitor(const ClockMonitor&) = delete;
  ClockMonitor& operator=(const ClockMonitor&) = delete;

  // One round of reads; call from one thread (the agent's, once a second). Blocks at most about
  // reply_timeout per reachable ptp4l socket. Never throws for a bad source.
  void poll();
  // Thread-safe copy of the state after the last poll().
  ClockSnapshot snapshot() const;

  const ClockConfig& config() const { return cfg_; }

 private:
  struct Source {
    std::string socket;
    Ptp4lClient client;
    PtpSourceTracker tracker;
    std::optional<ErrorReason> last_error;
    int last_errno = 0;
  };

  void add_error(SourceKind kind, ErrorReason reason, std::uint64_t n = 1);
  void refresh_probed_sources();
  PtpSocketSnapshot snapshot_of(const Source& s, SteadyTime now) const;

  ClockConfig cfg_;
  BoundConfig bound_cfg_;
  bool probing_;
  std::vector<Source> sources_;
  std::array<std::array<std::uint64_t, kErrorReasonCount>, kSourceKindCount> errors_{};
  mutable std::mutex mu_;
  ClockSnapshot snap_;
};

}  // namespace skewscope::clocks
