// Whether each capture family runs, with which candidate, and if not, why: what `/api/v1/status`
// (`capture_families`), `/metrics` (skewscope_capture_family_up{family,reason}) and the agent's
// log say. TCP is mandatory (the agent does not start without it); the others are optional and
// degrade to off with a reason instead of stopping the agent (docs/contract.md).
#pragma once

#include <array>
#include <string>

namespace skewscope {

enum class CaptureFamily {
  tcp,        // the TCP halves (tcp_syscalls: sock_tp, btf, raw_tp, core_read)
  payload,    // --payload-bytes: the payload copy of the syscall programs
  wire,       // --wire-timestamps: tc ingress (and egress) programs
  wire_send,  // the wire send side: sock_ops TX timestamping or tc egress
  rdma,       // --rdma: uprobes in the verbs libraries
  count_
};
const char* family_name(CaptureFamily f);

// Why a family is in its state: a bounded set, the {reason} label of /metrics.
enum class FamilyReason {
  running,               // up, with its chosen candidate
  not_requested,         // its flag is not given
  kernel_lacks_feature,  // no candidate has what it needs on this kernel
  load_failed,           // candidates had what they need, but loading every one failed (the verifier refused it)
  count_
};
const char* family_reason_name(FamilyReason r);

struct FamilyStatus {
  bool up = false;
  FamilyReason reason = FamilyReason::not_requested;
  std::string variant;  // the candidate that runs (empty when off)
  std::string detail;   // for people: what is missing, or the verifier's last words
};

using FamilyStatuses = std::array<FamilyStatus, static_cast<std::size_t>(CaptureFamily::count_)>;

inline FamilyStatus& status_of(FamilyStatuses& all, CaptureFamily f) { return all[static_cast<std::size_t>(f)]; }
inline const FamilyStatus& status_of(const FamilyStatuses& all, CaptureFamily f) {
  return all[static_cast<std::size_t>(f)];
}

}  // namespace skewscope
