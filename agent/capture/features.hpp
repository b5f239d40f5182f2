// What this kernel offers, and which program serves each hook: the one place where kernel
// differences are decided (shown by `skewscope doctor`, logged by the agent).
#pragma once

#include <string>
#include <vector>

namespace skewscope {

enum class Feature { btf, tracefs, ringbuf, syscall_tracepoints, task_btf, raw_tracepoints, kprobes, tai_clock, count_ };
const char* feature_name(Feature f);

struct KernelFeatures {
  std::string kernel_release;
  bool has[static_cast<int>(Feature::count_)] = {};
  std::vector<std::string> notes;  // why a feature is missing, for doctor

  bool operator[](Feature f) const { return has[static_cast<int>(f)]; }
};

// Probes without loading anything the agent will keep. Call after ensure_tracefs().
KernelFeatures probe_kernel_features();

// A candidate program for a hook, with the features it needs and the tracepoint it attaches to.
struct HookCandidate {
  std::string hook;        // what is observed, e.g. "tcp send: sendto"
  std::string program;     // the BPF program's name in its object
  std::string tracepoint;  // "syscalls/sys_enter_sendto" (empty when not a tracepoint)
  std::vector<Feature> needs;
};

struct HookChoice {
  HookCandidate candidate;
  bool chosen = false;
  std::string reason;  // why it was not chosen
};

// The candidate table for TCP halves. Every syscall hook has its entry and exit program.
const std::vector<HookCandidate>& tcp_hook_candidates();

// Evaluates the table: a candidate is chosen when its features are present and its tracepoint
// exists in tracefs.
std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table);

}  // namespace skewscope
