// The kernel's connection tracking entries as ctnetlink carries them (an event, or one entry of a
// dump), decoded into the two directed tuples that address translation needs. Pure: bytes in,
// entries or counted rejections out; the socket that reads them is conntrack_watch.*.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "skewscope/half.hpp"
#include "skewscope/result.hpp"

namespace skewscope::translate {

// present: a new entry, an update, or an entry listed by a dump; destroyed: the entry is gone.
enum class ConntrackChange : std::uint8_t { present, destroyed };

struct ConntrackEntry {
  ConntrackChange change = ConntrackChange::present;
  std::uint8_t protocol = 0;  // IPPROTO_TCP = 6
  // original: the tuple of the connection's first packet as it left its sender (before any
  // translation in this namespace). reply: the tuple of the answers as they arrive here, so
  // (reply.dst, reply.src) is the first packet's tuple after translation.
  FlowKey original;
  FlowKey reply;
  std::uint32_t status = 0;  // IPS_* bits

  // Source or destination translated: the two ends see different tuples.
  bool translated() const;
};

enum class ConntrackReject : std::uint8_t {
  truncated,        // a header or attribute runs past the end of its message
  missing_tuple,    // no original or reply tuple, or one without addresses or ports
  bad_address,      // an address attribute of neither 4 nor 16 bytes
  unexpected_type,  // a netlink message that is neither a conntrack entry, a dump's end nor an error
  count_,
};
std::string_view to_string(ConntrackReject reason);
using ConntrackRejects = std::array<std::uint64_t, static_cast<std::size_t>(ConntrackReject::count_)>;

// One ctnetlink message: the payload after the netlink header (nfgenmsg, then attributes), and
// whether the header's type said the entry was deleted.
Result<ConntrackEntry, ConntrackReject> decode_conntrack_entry(std::span<const std::uint8_t> payload, bool destroyed);

// What one datagram held besides entries: the end of a dump, or the errno of an error message
// (a refused dump request).
struct DatagramEnd {
  bool dump_done = false;
  int error = 0;
};

// Every message of one netlink datagram: conntrack entries appended to `entries`, rejections
// counted by reason (a datagram cut short counts `truncated` once and ends there).
DatagramEnd decode_conntrack_datagram(std::span<const std::uint8_t> datagram, std::vector<ConntrackEntry>& entries,
                                      ConntrackRejects& rejected);

}  // namespace skewscope::translate
