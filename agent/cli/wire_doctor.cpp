#include "cli/wire_doctor.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "capture/wire_capture.hpp"
#include "clocks/phc.hpp"

namespace skewscope {
namespace {

bool kernel_has_func(const char* name) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return false;
  bool found = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
  btf__free(vmlinux);
  return found;
}

}  // namespace

void print_wire_doctor(std::ostream& out) {
  const bool tc = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, nullptr) == 1;
  const bool kern_ctx = kernel_has_func("bpf_cast_to_kern_ctx");
  const bool tx_tstamp = kernel_has_func("bpf_sock_ops_enable_tx_tstamp");
  auto yes = [](bool b) { return b ? "yes " : "no  "; };
  out << "\nwire timestamps (--wire-timestamps IFACE[@NETNS_PATH],...; off by default):\n";
  out << "  " << yes(tc) << "tc (clsact) programs\n";
  out << "  " << yes(kern_ctx) << "bpf_cast_to_kern_ctx kfunc (an interface's network namespace; Linux >= 6.3)\n";
  out << "  " << yes(tx_tstamp)
      << "sock_ops TX timestamping callbacks (bpf_sock_ops_enable_tx_tstamp; Linux >= 6.14)\n";
  const bool usable = tc && kern_ctx;
  out << "  receive side: " << (usable ? "tc ingress" : "unavailable")
      << "; stamp: the kernel's receive stamp (the agent holds the net_timestamp key with one SO_TIMESTAMPING "
         "socket), else the program's own time (counted), and the NIC's hardware stamp when present\n";
  out << "  send side: ";
  if (!usable)
    out << "unavailable\n";
  else if (tx_tstamp)
    out << kSendPathSockOps << " for the sockets of the cgroups named by --wire-cgroup (the TX timestamping "
        << "callbacks exist on this kernel: the driver's or the NIC's stamp of each sendmsg's last byte); "
        << kSendPathTcEgress << " on the named interfaces when no --wire-cgroup is given\n";
  else
    out << kSendPathTcEgress << " on the named interfaces -- the sock_ops TX timestamping callbacks need Linux 6.14, "
        << "so --wire-cgroup is not used on this kernel\n";
  const auto phcs = clocks::list_phcs();
  out << "  hardware stamps: used when a named interface's NIC attaches them (its PHC, from ethtool's "
         "timestamping info, is read to map them); PHCs on this machine: "
      << (phcs.empty() ? std::string("none") : std::to_string(phcs.size())) << "\n";
}

}  // namespace skewscope
