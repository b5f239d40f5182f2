// The local GID of an RDMA connection. modify_qp to RTR names it only by an index into the port's
// GID table (ah_attr.grh.sgid_index); the table lives in the kernel and is published in sysfs as
// /sys/class/infiniband/DEV/ports/PORT/gids/INDEX, one GID per file in eight groups of four hex
// digits ("0000:0000:0000:0000:0000:ffff:0a4d:0001"). The agent reads it through /proc/PID/root:
// the application's own view of sysfs (a container with its own RDMA namespace sees its devices).
// On RoCEv2 a GID is an address of the port's network device (IPv4 as IPv4-mapped IPv6), which is
// exactly the host address the exchange keys by.
#pragma once

#include <cstdint>
#include <optional>
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

}  // namespace skewscope
