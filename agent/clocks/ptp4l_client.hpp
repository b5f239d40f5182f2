// Client of ptp4l's management socket (what pmc does, without spawning pmc): one round sends
// GET TIME_STATUS_NP, PORT_DATA_SET, CURRENT_DATA_SET and PARENT_DATA_SET and collects the
// RESPONSEs until all are in or the reply timeout passes. Failures are values, never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clocks/clock_types.hpp"
#include "clocks/ptp_management.hpp"

namespace skewscope::clocks {

// The sockets probed when none is configured: linuxptp up to 4.4 (Debian 12 ships 3.1.1) and
// after, each with its read-only twin (4.0+).
inline const std::vector<std::string>& default_ptp4l_sockets() {
  static const std::vector<std::string> k{"/var/run/ptp4l", "/var/run/ptp4lro", "/var/run/ptp/ptp4l",
                                          "/var/run/ptp/ptp4lro"};
  return k;
}

// Ports kept per reading. A linuxptp clock has one port per interface it runs on; more than this
// is a broken or hostile peer, and the extra replies are counted as unexpected.
inline constexpr std::size_t kMaxPtpPorts = 256;

struct Ptp4lReading {
  std::optional<ptp::TimeStatusNp> time_status;
  std::vector<ptp::PortDataSet> ports;  // one RESPONSE per port (portIdentity) of the clock
  std::optional<ptp::CurrentDataSet> current;
  std::optional<ptp::ParentDataSet> parent;
  std::vector<ptp::ManagementError> management_errors;
};

struct QueryResult {
  Ptp4lReading reading;
  std::optional<ErrorReason> error;  // the round's main failure; nullopt = every GET answered
  int sys_errno = 0;                 // errno behind `error`, when a system call failed
  ErrorCounts errors;                // every failure in the round (malformed replies, ...)
};

class Ptp4lClient {
 public:
  struct Options {
    std::string server_path;                 // ptp4l's uds_address
    std::string client_dir = "/var/run";     // where our own reply socket is bound
    std::chrono::milliseconds timeout{200};  // per round, all four GETs together
    std::uint8_t domain = 0;                 // must match ptp4l's domainNumber
  };

  explicit Ptp4lClient(Options opts);
  ~Ptp4lClient();
  Ptp4lClient(Ptp4lClient&& other) noexcept;
  Ptp4lClient& operator=(Ptp4lClient&& other) noexcept;
  Ptp4lClient(const Ptp4lClient&) = delete;
  Ptp4lClient& operator=(const Ptp4lClient&) = delete;

  // One round. Blocks at most about options().timeout.
  QueryResult query();

  const Options& options() const { return opts_; }
  // Path of our bound reply socket ("" while not bound). Unique per process and client.
  const std::string& client_path() const { return path_; }

 private:
  bool open_socket(QueryResult& res);
  void close_socket();
  void drain(QueryResult& res);
  void handle(const std::uint8_t* data, std::size_t size, bool truncated, QueryResult& res);

  struct Pending {
    ptp::ManagementId id;
    std::uint16_t seq;
    bool answered;
  };

  Options opts_;
  int fd_ = -1;
  std::string path_;
  std::uint16_t next_seq_ = 0;
  ptp::PortIdentity self_;
  std::vector<Pending> pending_;
};

}  // namespace skewscope::clocks
