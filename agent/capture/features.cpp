#include "capture/features.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "capture/tracefs.hpp"
#include "tcp_syscalls.skel.h"

namespace skewscope {

const char* feature_name(Feature f) {
  switch (f) {
    case Feature::btf: return "kernel BTF (/sys/kernel/btf/vmlinux)";
    case Feature::tracefs: return "tracefs";
    case Feature::ringbuf: return "BPF ring buffer";
    case Feature::syscall_tracepoints: return "syscall tracepoints";
    case Feature::task_btf: return "BTF-typed task pointer (bpf_get_current_task_btf)";
    case Feature::rdonly_cast_kfunc: return "bpf_rdonly_cast kfunc callable from tracepoints";
    case Feature::count_: break;
  }
  return "?";
}

namespace {

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

void set(KernelFeatures& k, Feature f, bool value, const std::string& note_when_missing) {
  k.has[static_cast<int>(f)] = value;
  if (!value) k.notes.push_back(std::string(feature_name(f)) + ": " + note_when_missing);
}

// The kfunc must be in the kernel's BTF (Linux >= 6.2), and a tracepoint program must be allowed
// to call it: which program types may call a kfunc changed between releases, so after the BTF
// lookup a minimal program that calls it is loaded and closed (the verifier has the last word).
bool probe_rdonly_cast(std::string& why_not) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    why_not = "kernel BTF cannot be read";
    return false;
  }
  int func_id = btf__find_by_name_kind(vmlinux, "bpf_rdonly_cast", BTF_KIND_FUNC);
  int file_id = btf__find_by_name_kind(vmlinux, "file", BTF_KIND_STRUCT);
  btf__free(vmlinux);
  if (func_id <= 0) {
    why_not = "not in kernel BTF (Linux < 6.2)";
    return false;
  }
  if (file_id <= 0) {
    why_not = "struct file not in kernel BTF";
    return false;
  }
  const bpf_insn program[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0},        // r1 = 0 (the pointer to re-type)
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, file_id},  // r2 = BTF id of struct file
      {BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, func_id},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  int fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "probe_rdonly", "GPL", program, sizeof program / sizeof program[0],
                         nullptr);
  if (fd < 0) {
    why_not = std::string("in kernel BTF, but a tracepoint program calling it does not load: ") + std::strerror(errno);
    return false;
  }
  close(fd);
  return true;
}

}  // namespace

KernelFeatures probe_kernel_features() {
  KernelFeatures k;
  utsname u{};
  if (uname(&u) == 0) k.kernel_release = u.release;
  const std::string tracing = kTracefsPath;
  set(k, Feature::btf, exists("/sys/kernel/btf/vmlinux"), "no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)");
  set(k, Feature::tracefs, tracefs_mounted(), "tracefs is not mounted and could not be mounted");
  set(k, Feature::ringbuf, libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1,
      "map type not supported (Linux < 5.8)");
  set(k, Feature::syscall_tracepoints, exists(tracing + "/events/syscalls/sys_enter_write/id"),
      "no events/syscalls in tracefs (CONFIG_FTRACE_SYSCALLS)");
  set(k, Feature::task_btf,
      libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf, nullptr) == 1,
      "helper not available to tracepoint programs (Linux < 5.11)");
  std::string why_not;
  bool rdonly_cast = k[Feature::btf] && probe_rdonly_cast(why_not);
  set(k, Feature::rdonly_cast_kfunc, rdonly_cast, k[Feature::btf] ? why_not : "needs kernel BTF");
  return k;
}

// Program names are spelled once, here, and each resolves to the skeleton's member of that name:
// a program missing from the object is a compile error, not a run-time lookup failure.
#define PROGRAM(name) named(#name, [](tcp_syscalls* s) { return s->progs.name; })

const std::vector<HookCandidate>& tcp_hook_candidates() {
  static const std::vector<HookCandidate> table = [] {
    // Every program needs CO-RE relocations (BTF), the ring buffer and its tracepoint.
    const std::vector<Feature> base{Feature::btf, Feature::tracefs, Feature::ringbuf, Feature::syscall_tracepoints};
    std::vector<Feature> btf_walk = base;
    btf_walk.push_back(Feature::task_btf);
    btf_walk.push_back(Feature::rdonly_cast_kfunc);
    auto named = [](const char* program, bpf_program* (*program_of)(tcp_syscalls*)) {
      HookCandidate c;
      c.program = program;
      c.program_of = program_of;
      return c;
    };
    std::vector<HookCandidate> t;
    auto add = [&](const char* direction, const char* call, HookCandidate enter_btf, HookCandidate enter_core,
                   HookCandidate exit) {
      std::string what = std::string("tcp ") + direction + ": " + call;
      std::string tp = std::string("syscalls/sys_enter_") + call;
      enter_btf.hook = enter_core.hook = what + " entry";
      enter_btf.tracepoint = enter_core.tracepoint = tp;
      enter_btf.variant = kVariantBtf;
      enter_btf.needs = btf_walk;
      enter_core.variant = kVariantCoreRead;
      enter_core.needs = base;
      exit.hook = what + " exit";
      exit.tracepoint = std::string("syscalls/sys_exit_") + call;
      exit.needs = base;
      t.push_back(std::move(enter_btf));
      t.push_back(std::move(enter_core));
      t.push_back(std::move(exit));
    };
#define SYSCALL_HOOK(direction, call) \
  add(direction, #call, PROGRAM(enter_##call), PROGRAM(enter_##call##_core), PROGRAM(exit_##call))
    SYSCALL_HOOK("send", write);
    SYSCALL_HOOK("send", writev);
    SYSCALL_HOOK("send", sendto);
    SYSCALL_HOOK("send", sendmsg);
    SYSCALL_HOOK("send", sendmmsg);
    SYSCALL_HOOK("recv", read);
    SYSCALL_HOOK("recv", readv);
    SYSCALL_HOOK("recv", recvfrom);
    SYSCALL_HOOK("recv", recvmsg);
    SYSCALL_HOOK("recv", recvmmsg);
#undef SYSCALL_HOOK
    return t;
  }();
  return table;
}

#undef PROGRAM

std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table) {
  const char* forced_env = std::getenv(kForceVariantEnv);
  std::string forced = forced_env ? forced_env : "";
  bool forced_known = forced.empty() || forced == kVariantBtf || forced == kVariantCoreRead;
  std::vector<HookChoice> out;
  for (const auto& candidate : table) {
    HookChoice choice{candidate, true, {}};
    auto reject = [&](std::string why) {
      if (!choice.chosen) return;
      choice.chosen = false;
      choice.reason = std::move(why);
    };
    if (!candidate.variant.empty() && !forced.empty()) {
      if (!forced_known)
        reject(std::string(kForceVariantEnv) + "=" + forced + " is not a variant (" + kVariantBtf + ", " +
               kVariantCoreRead + ")");
      else if (candidate.variant != forced)
        reject(std::string(kForceVariantEnv) + "=" + forced);
    }
    for (Feature f : candidate.needs)
      if (!features[f]) reject(std::string("needs ") + feature_name(f));
    if (!exists(std::string(kTracefsPath) + "/events/" + candidate.tracepoint + "/id"))
      reject("tracepoint " + candidate.tracepoint + " does not exist");
    for (const auto& earlier : out)
      if (earlier.chosen && earlier.candidate.hook == candidate.hook)
        reject("hook served by " + earlier.candidate.program);
    out.push_back(std::move(choice));
  }
  return out;
}

std::string chosen_variant(const std::vector<HookChoice>& choices) {
  for (const auto& c : choices)
    if (c.chosen && !c.candidate.variant.empty()) return c.candidate.variant;
  return {};
}

}  // namespace skewscope
