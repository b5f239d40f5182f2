// What this kernel offers, and which program serves each hook: the one place where kernel
// differences are decided (shown by `skewscope doctor`, logged by the agent).
#pragma once

#include <string>
#include <vector>

struct tcp_syscalls;  // generated skeleton
struct bpf_program;

namespace skewscope {

enum class Feature { btf, tracefs, ringbuf, syscall_tracepoints, task_btf, rdonly_cast_kfunc, count_ };
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

// The two ways an entry program walks fd -> file -> socket: through BTF pointers (one load per
// field; needs bpf_rdonly_cast, Linux >= 6.2) or with one bpf_probe_read_kernel per field.
inline constexpr const char* kVariantBtf = "btf";
inline constexpr const char* kVariantCoreRead = "core_read";
// Tests force a variant with this environment variable (read only by choose_hooks).
inline constexpr const char* kForceVariantEnv = "SKEWSCOPE_FORCE_VARIANT";

// A candidate program for a hook, with the features it needs and the tracepoint it attaches to.
// A hook's candidates are in order of preference; the first whose needs are met serves it.
struct HookCandidate {
  std::string hook;        // what is observed, e.g. "tcp send: sendto entry"
  std::string program;     // the BPF program's name in its object
  std::string tracepoint;  // "syscalls/sys_enter_sendto"
  std::string variant;     // kVariantBtf, kVariantCoreRead, or empty when the program has one form
  std::vector<Feature> needs;
  bpf_program* (*program_of)(tcp_syscalls*) = nullptr;  // the skeleton's member: checked by the compiler
};

struct HookChoice {
  HookCandidate candidate;
  bool chosen = false;
  std::string reason;  // why it was not chosen
};

// The candidate table for TCP halves. Every syscall has an entry hook (two variants) and an exit hook.
const std::vector<HookCandidate>& tcp_hook_candidates();

// Evaluates the table: per hook, the first candidate whose features are present, whose variant is
// not excluded by SKEWSCOPE_FORCE_VARIANT and whose tracepoint exists in tracefs.
std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table);

// The variant of the chosen entry programs ("btf", "core_read"), or empty when none is chosen.
std::string chosen_variant(const std::vector<HookChoice>& choices);

}  // namespace skewscope
