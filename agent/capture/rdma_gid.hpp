// The local GID of an RDMA connection. modify_qp to RTR names it only by an index into the port's
// GID table (ah_attr.grh.sgid_index); the table lives in the kernel and is published in sysfs as
// /sys/class/infiniband/DEV/ports/PORT/gids/INDEX, one GID per file in eight groups of four hex
// digits ("0000:0000:0000:0000:0000:ffff:0a4d:0001"). The agent reads it through /proc/PID/root:
// the application's own view of sysfs (a container with its own RDMA namespace sees its devices).
// On RoCEv2 a GID is an address of the port's network device (IPv4 as IPv4-mapped IPv6), which is
// exactly the host address the exchange keys by.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "skewscope/half.hpp"

namespace skewscope {

// A GID in sysfs text form, with or without the trailing newline; nullopt when malformed.
std::optional<Address> parse_sysfs_gid(std::string_view text);

// The file holding a GID-table entry as process `pid` sees it; empty when the device name could
// escape its directory (it comes from the process's memory).
std::string gid_table_path(std::uint32_t pid, std::string_view device, unsigned port, unsigned index);

// Reads and parses that file. nullopt: no such entry (no device, process gone, empty entry).
std::optional<Address> read_local_gid(std::uint32_t pid, std::string_view device, unsigned port, unsigned index);

// Each RDMA process's view of /sys/class/infiniband, held open from the moment the agent learns
// of the process (its ibv_open_device), so that the GID of a connection can still be read when
// the process has exited before the agent reads its connect record: /proc/PID/root is gone then,
// and with the last process of a mount namespace its mounts are detached from that root, but a
// directory held open keeps its own mount readable. Closed once a process has been seen gone at
// two scans in a row (its last records are read by then). Bounded: past kMaxHeld, processes are
// read through /proc/PID/root only (counted).
class GidTableDirs {
 public:
  static constexpr std::size_t kMaxHeld = 4096;
  GidTableDirs() = default;
  ~GidTableDirs();
  GidTableDirs(const GidTableDirs&) = delete;
  GidTableDirs& operator=(const GidTableDirs&) = delete;

  // Opens the process's directory (again, if the pid is new or was reused). False: not opened.
  bool hold(std::uint32_t pid);
  bool holds(std::uint32_t pid) const { return dirs_.contains(pid); }
  // The GID through the held directory, else through /proc/PID/root.
  std::optional<Address> read(std::uint32_t pid, std::string_view device, unsigned port, unsigned index) const;
  // `alive`: the processes a scan found; closes those missing from this scan and the one before.
  void forget_gone(const std::set<std::uint32_t>& alive);
  std::size_t held() const { return dirs_.size(); }
  std::uint64_t not_held() const { return not_held_; }

 private:
  struct Held {
    int fd = -1;
    bool missing_once = false;
  };
  std::map<std::uint32_t, Held> dirs_;
  std::uint64_t not_held_ = 0;
};

}  // namespace skewscope
