#include "client/wire_doctor.hpp"

#include "capture/features.hpp"
#include "capture/wire_capture.hpp"
#include "clocks/phc.hpp"

namespace skewscope {

void print_wire_doctor(std::ostream& out, const std::string& wire_variant) {
  out << "\nwire timestamps (--wire-timestamps IFACE[@NETNS_PATH],...; off by default):\n";
  const bool usable = !wire_variant.empty();
  out << "  receive side: " << (usable ? "tc ingress (variant " + wire_variant + ")" : std::string("unavailable"))
      << "; stamp: the kernel's receive stamp (the agent holds the net_timestamp key with one SO_TIMESTAMPING "
         "socket), else the program's own time (counted), and the NIC's hardware stamp when present";
  if (wire_variant == kWireVariantCtx)
    out << " (struct __sk_buff's hwtstamp: Linux >= 5.16; the receive stamp's clock told by tstamp_type on "
           "Linux >= 5.18, by its size before)";
  out << "\n  send side: ";
  if (!usable)
    out << "unavailable\n";
  else
    out << kSendPathSockOps << " for the sockets of the cgroups named by --wire-cgroup where the sock_ops TX "
        << "timestamping callbacks exist (Linux >= 6.14; see the wire send side above), else " << kSendPathTcEgress
        << " on the named interfaces\n";
  const auto phcs = clocks::list_phcs();
  out << "  hardware stamps: used when a named interface's NIC attaches them (its PHC, from ethtool's "
         "timestamping info, is read to map them); PHCs on this machine: "
      << (phcs.empty() ? std::string("none") : std::to_string(phcs.size())) << "\n";
}

}  // namespace skewscope
