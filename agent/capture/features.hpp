// What this kernel offers, and which program serves each hook: the one place where kernel
// differences are decided (shown by `skewscope doctor`, logged by the agent).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "capture/family_status.hpp"
#include "skewscope/result.hpp"

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
  tc_programs,
  kern_ctx_kfunc,
  sockops_tx_timestamping,
  uprobes,
  count_
};
const char* feature_name(Feature f);
// The short name SKEWSCOPE_HIDE_FEATURES takes ("btf", "kern_ctx_kfunc", ...).
const char* feature_key(Feature f);

// Tests make the probe report features as missing that this kernel has, to run the fallbacks
// and the degraded paths on it: a comma-separated list of feature_key names. Every hidden
// feature is named in the notes (doctor, the agent's log), so the pretence is never silent.
inline constexpr const char* kHideFeaturesEnv = "SKEWSCOPE_HIDE_FEATURES";

struct KernelFeatures {
  std::string kernel_release;
  bool has[static_cast<int>(Feature::count_)] = {};
  std::vector<std::string> notes;  // why a feature is missing, for doctor
  // Tracepoints of the TCP candidate table that this kernel's tracefs lacks ("syscalls/sys_enter_read").
  std::vector<std::string> missing_tracepoints;

  bool operator[](Feature f) const { return has[static_cast<int>(f)]; }
};

// Probes without loading anything the agent will keep (the kfunc probes test-load a small
// program and close it). Call after ensure_tracefs(). An unknown name in SKEWSCOPE_HIDE_FEATURES
// is an error.
Result<KernelFeatures> probe_kernel_features();

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

// A variant the kernel refused at load, with the loader's last words: passed over by the choice.
using RejectedVariants = std::map<std::string, std::string>;

// Evaluates the table. One variant serves every hook (two would capture a call twice): the forced
// one (SKEWSCOPE_FORCE_VARIANT), else the first in order of preference whose programs' features
// are all present. Per hook, the first candidate of that variant whose tracepoint exists.
// Payload capture (--payload-bytes) does not change the choice: every variant copies payloads,
// and a variant the kernel refuses with payload capture on is passed over at load like any other.
// `rejected`: variants the kernel refused at load; the next one in order of preference serves.
// A hook's reason names the first thing that rules it out: a missing feature or tracepoint
// before the choice of another variant.
std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table,
                                     const RejectedVariants& rejected = {});

// choose_hooks, then `load` of the chosen variant's programs; a variant `load` refuses is passed
// over for the next, until one loads or none is left (a forced variant is not replaced). The
// agent's `load` keeps what it loaded; doctor's loads and closes (program_verify.hpp).
struct LoadableHooks {
  std::vector<HookChoice> choices;  // no entry chosen when nothing loads
  RejectedVariants rejected;
};
using HookLoader = std::function<Status(const std::vector<HookChoice>&)>;
LoadableHooks choose_loadable_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table,
                                    const HookLoader& load);

// The variant of the chosen entry programs ("sock_tp", "raw_tp", "btf", "core_read"), or empty when none is chosen.
std::string chosen_variant(const std::vector<HookChoice>& choices);

// The families other than TCP: each served whole by one candidate (a BPF object, or the part of
// one that it names), in order of preference, chosen by the same rules: what it needs, then a
// forced variant, then whether the kernel accepted it at load.
struct FamilyCandidate {
  CaptureFamily family = CaptureFamily::wire;
  std::string variant;                // "kern_ctx", "ctx"; "sock_ops", "tc_egress"; "uprobes"
  std::string object;                 // the BPF object (program_verify.hpp's names)
  std::vector<std::string> programs;  // what it loads of the object; empty: every program
  std::vector<Feature> needs;
  std::string description;
};

// wire: tc ingress/egress. kern_ctx (wire_tc, Linux >= 6.2) reads the interface's namespace from
// the packet's device; ctx (wire_tc_ctx) reads only struct __sk_buff and is loaded once per
// namespace with that namespace set by the agent.
inline constexpr const char* kWireVariantKernCtx = "kern_ctx";
inline constexpr const char* kWireVariantCtx = "ctx";
const std::vector<FamilyCandidate>& wire_candidates();
// wire_send: sock_ops TX timestamping (--wire-cgroup, Linux >= 6.14), else tc egress of the wire
// variant that runs.
const std::vector<FamilyCandidate>& wire_send_candidates();
// rdma: the uprobes of rdma_verbs.
const std::vector<FamilyCandidate>& rdma_candidates();
// The variable that forces a family's variant in tests: SKEWSCOPE_FORCE_WIRE_VARIANT,
// SKEWSCOPE_FORCE_WIRE_SEND, SKEWSCOPE_FORCE_RDMA_VARIANT (TCP: kForceVariantEnv).
const char* force_env_of(CaptureFamily family);

struct CandidateChoice {
  FamilyCandidate candidate;
  bool chosen = false;
  std::string reason;  // why not chosen
  bool rejected_at_load = false;
};

// Per candidate in order: a missing feature, a different forced variant, an exclusion (`excluded`:
// variant -> why, e.g. refused at load, or no --wire-cgroup), else the first such is chosen.
std::vector<CandidateChoice> choose_candidate(const KernelFeatures& features, const std::vector<FamilyCandidate>& table,
                                              const std::map<std::string, std::string>& excluded = {},
                                              const std::map<std::string, std::string>& refused = {});
const CandidateChoice* chosen_of(const std::vector<CandidateChoice>& choices);

// choose_candidate, then `load` of the chosen one; one `load` refuses is passed over for the
// next (not when forced). The family's status says which runs, or why none does.
struct LoadableCandidate {
  std::vector<CandidateChoice> choices;
  FamilyStatus status;
};
using CandidateLoader = std::function<Status(const FamilyCandidate&)>;
LoadableCandidate choose_loadable_candidate(const KernelFeatures& features, const std::vector<FamilyCandidate>& table,
                                            const std::map<std::string, std::string>& excluded,
                                            const CandidateLoader& load);

}  // namespace skewscope
