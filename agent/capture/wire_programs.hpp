// The wire capture's BPF objects, loaded by the candidate tables (features.hpp): the tc variant
// (kern_ctx: one wire_tc for every namespace; ctx: one wire_tc_ctx per namespace, its namespace
// set before load) and, for the sock_ops send side, wire_sockops sharing the tc maps. One RAII
// owner; attaching to interfaces and cgroups is wire_capture.cpp's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capture/features.hpp"
#include "skewscope/result.hpp"

struct wire_tc;  // generated skeletons
struct wire_tc_ctx;
struct wire_sockops;
struct bpf_link;

namespace skewscope {

struct WireProgramSettings {
  bool egress_data = true;  // data segments at egress are send halves (tc send side)
  bool ack_samples = false;
  // The namespaces of the named interfaces (path as given, "" the agent's own) -> inode.
  std::map<std::string, std::uint32_t> netns_inodes;
};

class WirePrograms {
 public:
  WirePrograms() = default;
  ~WirePrograms();
  WirePrograms(const WirePrograms&) = delete;
  WirePrograms& operator=(const WirePrograms&) = delete;

  // Loads the tc variant `variant` (kWireVariantKernCtx or kWireVariantCtx); the error is the
  // loader's last words (the candidate table then tries the next variant). Replaces any earlier
  // attempt.
  Status load_tc(const std::string& variant, const WireProgramSettings& settings);
  // Loads wire_sockops with the tc object's ring buffer and counters (after load_tc).
  Status load_sockops();

  // The tc programs for interfaces of namespace `netns_path`.
  int ingress_fd(const std::string& netns_path) const;
  int egress_fd(const std::string& netns_path) const;
  int ring_fd() const;
  int counters_fd() const;
  // A link of the sock_ops program to the cgroup `cgroup_fd` (null, errno set, on failure).
  bpf_link* attach_sockops(int cgroup_fd) const;
  const std::string& variant() const { return variant_; }

 private:
  void close_all();

  std::string variant_;
  wire_tc* kern_ctx_ = nullptr;
  std::map<std::string, wire_tc_ctx*> ctx_by_netns_;  // netns path -> its instance
  wire_tc_ctx* maps_owner_ = nullptr;                 // the first loaded: its maps serve all
  wire_sockops* sockops_ = nullptr;
};

}  // namespace skewscope
