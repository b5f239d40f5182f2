#include "capture/features.hpp"

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "capture/tracefs.hpp"

namespace skewscope {

const char* feature_name(Feature f) {
  switch (f) {
    case Feature::btf: return "kernel BTF (/sys/kernel/btf/vmlinux)";
    case Feature::tracefs: return "tracefs";
    case Feature::ringbuf: return "BPF ring buffer";
    case Feature::syscall_tracepoints: return "syscall tracepoints";
    case Feature::task_btf: return "BTF-typed task reads (bpf_get_current_task_btf)";
    case Feature::raw_tracepoints: return "raw tracepoints";
    case Feature::kprobes: return "kprobes";
    case Feature::tai_clock: return "bpf_ktime_get_tai_ns";
    case Feature::count_: break;
  }
  return "?";
}

namespace {

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

void set(KernelFeatures& k, Feature f, bool value, const char* note_when_missing) {
  k.has[static_cast<int>(f)] = value;
  if (!value && note_when_missing) k.notes.push_back(std::string(feature_name(f)) + ": " + note_when_missing);
}

}  // namespace

KernelFeatures probe_kernel_features() {
  KernelFeatures k;
  utsname u{};
  if (uname(&u) == 0) k.kernel_release = u.release;
  const std::string tracing = kTracefsPath;
  set(k, Feature::btf, exists("/sys/kernel/btf/vmlinux"), "no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)");
  set(k, Feature::tracefs, tracefs_mounted(), "tracefs is not mounted and could not be mounted");
  set(k, Feature::ringbuf, libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1, "map type not supported");
  set(k, Feature::syscall_tracepoints, exists(tracing + "/events/syscalls/sys_enter_write/id"),
      "no events/syscalls in tracefs (CONFIG_FTRACE_SYSCALLS)");
  // The fd -> socket walk loads fields through BTF pointers (the task, and bpf_rdonly_cast for
  // the file and socket, Linux >= 6.2) instead of one probe-read helper call per field.
  set(k, Feature::task_btf,
      libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf, nullptr) == 1,
      "helper not available to tracepoint programs (Linux < 5.11)");
  set(k, Feature::raw_tracepoints, libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, nullptr) == 1,
      "program type not supported");
  set(k, Feature::kprobes, exists(tracing + "/kprobe_events"), "no kprobe_events in tracefs (CONFIG_KPROBE_EVENTS)");
  set(k, Feature::tai_clock,
      libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_ktime_get_tai_ns, nullptr) == 1,
      "helper not available to tracepoint programs (Linux < 6.1)");
  return k;
}

const std::vector<HookCandidate>& tcp_hook_candidates() {
  static const std::vector<HookCandidate> table = [] {
    std::vector<HookCandidate> t;
    const std::vector<Feature> needs{Feature::btf, Feature::tracefs, Feature::ringbuf, Feature::syscall_tracepoints,
                                     Feature::task_btf};
    for (const char* call : {"write", "writev", "sendto", "sendmsg", "sendmmsg"}) {
      t.push_back({std::string("tcp send: ") + call, std::string("enter_") + call,
                   std::string("syscalls/sys_enter_") + call, needs});
      t.push_back({std::string("tcp send: ") + call, std::string("exit_") + call,
                   std::string("syscalls/sys_exit_") + call, needs});
    }
    for (const char* call : {"read", "readv", "recvfrom", "recvmsg", "recvmmsg"}) {
      t.push_back({std::string("tcp recv: ") + call, std::string("enter_") + call,
                   std::string("syscalls/sys_enter_") + call, needs});
      t.push_back({std::string("tcp recv: ") + call, std::string("exit_") + call,
                   std::string("syscalls/sys_exit_") + call, needs});
    }
    return t;
  }();
  return table;
}

std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table) {
  std::vector<HookChoice> out;
  for (const auto& candidate : table) {
    HookChoice choice{candidate, true, {}};
    for (Feature f : candidate.needs) {
      if (!features[f]) {
        choice.chosen = false;
        choice.reason = std::string("needs ") + feature_name(f);
        break;
      }
    }
    if (choice.chosen && !candidate.tracepoint.empty() &&
        !exists(std::string(kTracefsPath) + "/events/" + candidate.tracepoint + "/id")) {
      choice.chosen = false;
      choice.reason = "tracepoint " + candidate.tracepoint + " does not exist";
    }
    out.push_back(choice);
  }
  return out;
}

}  // namespace skewscope
