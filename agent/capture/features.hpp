// What this kernel offers, and which program serves each hook: the one place where kernel
// differences are decided (shown by `skewscope doctor`, logged by the agent).
#pragma once

#include <string>
#include <vector>

struct tcp_syscalls;  // generated skeleton
struct bpf_program;

namespace skewscope {

enum class Feature {
  btf,
  tracefs,
  ringbuf,
  syscall_tracepoints,
  task_btf,
  rdonly_cast_kfunc,
  btf_raw_tracepoints,
  task_storage,
  socket_tracepoints,
  count_
};
const char* feature_name(Feature f);

struct KernelFeatures {
  std::string kernel_release;
  bool has[static_cast<int>(Feature::count_)] = {};
  std::vector<std::string> notes;  // why a feature is missing, for doctor

  bool operator[](Feature f) const { return has[static_cast<int>(f)]; }
};

// Probes without loading anything the agent will keep (the kfunc probe test-loads a two-call
// program and closes it). Call after ensure_tracefs().
KernelFeatures probe_kernel_features();

// The variants, in order of preference (measured: bench/overhead, bench/overhead_tools/untraced_min.sh):
// - sock_tp: the socket-layer tracepoints (tcp:tcp_sendmsg_locked, sock:sock_send_length,
//   sock:sock_recv_length) as tp_btf programs: the socket is an argument, no fd walk, and only
//   socket calls run a program. Not with payload capture (it copies from the syscall's buffers).
// - btf: one classic tracepoint per syscall, fd -> file -> socket through BTF pointers (one load
//   per field; needs bpf_rdonly_cast, Linux >= 6.2).
// - raw_tp: two BTF raw tracepoints (sys_enter, sys_exit) filtered by syscall number, the call in
//   task-local storage, the socket read through BTF pointers. Cheaper on hooked calls, but every
//   other syscall of the host runs its filter: only when forced.
// - core_read: the classic tracepoints with one bpf_probe_read_kernel per field (Linux >= 5.8).
inline constexpr const char* kVariantSockTp = "sock_tp";
inline constexpr const char* kVariantRawTp = "raw_tp";
inline constexpr const char* kVariantBtf = "btf";
inline constexpr const char* kVariantCoreRead = "core_read";
// A candidate of either classic variant (the per-syscall exit programs serve both).
inline constexpr const char* kVariantClassic = "classic";
// Tests force a variant with this environment variable (read only by choose_hooks).
inline constexpr const char* kForceVariantEnv = "SKEWSCOPE_FORCE_VARIANT";

// A candidate program for a hook, with the features it needs and the tracepoint it attaches to.
// A hook's candidates are in order of preference; the first whose needs are met serves it.
struct HookCandidate {
  std::string hook;        // what is observed, e.g. "tcp send: sendto entry"
  std::string program;     // the BPF program's name in its object
  std::string tracepoint;  // "syscalls/sys_enter_sendto"
  std::string variant;     // kVariantSockTp, kVariantRawTp, kVariantBtf, kVariantCoreRead or kVariantClassic
  bool entry = false;      // an entry program (or sock_tp's send start and receive): attached after
                           // every exit program, so that no call is remembered at entry whose exit
                           // nobody would see
  std::vector<Feature> needs;
  bpf_program* (*program_of)(tcp_syscalls*) = nullptr;  // the skeleton's member: checked by the compiler
};

struct HookChoice {
  HookCandidate candidate;
  bool chosen = false;
  std::string reason;  // why it was not chosen
};

// The candidate table for TCP halves. Every syscall has an entry hook (three variants) and an exit
// hook (two); the socket layer has three hooks of its own (sock_tp).
const std::vector<HookCandidate>& tcp_hook_candidates();

// Evaluates the table. One variant serves every hook (two would capture a call twice): the forced
// one (SKEWSCOPE_FORCE_VARIANT), else the first in order of preference whose programs' features
// are all present. Per hook, the first candidate of that variant whose tracepoint exists.
// `payload_capture` (--payload-bytes > 0): the payload copy hooks the syscall programs, so sock_tp
// is passed over (and refused when forced).
std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table,
                                     bool payload_capture = false);

// The variant of the chosen entry programs ("sock_tp", "raw_tp", "btf", "core_read"), or empty when none is chosen.
std::string chosen_variant(const std::vector<HookChoice>& choices);

}  // namespace skewscope
