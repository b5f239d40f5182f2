#include "capture/features.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "capture/tracefs.hpp"
#include "skewscope/result.hpp"
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
    case Feature::btf_raw_tracepoints: return "BTF raw tracepoints on sys_enter/sys_exit (tp_btf)";
    case Feature::task_storage: return "task-local storage (BPF_MAP_TYPE_TASK_STORAGE)";
    case Feature::socket_tracepoints:
      return "socket-layer tracepoints (tcp_sendmsg_locked, sock_send_length, sock_recv_length) for tp_btf";
    case Feature::tc_programs: return "tc (clsact) BPF programs";
    case Feature::kern_ctx_kfunc: return "bpf_cast_to_kern_ctx kfunc callable from tc programs";
    case Feature::sockops_tx_timestamping: return "sock_ops TX timestamping callbacks (bpf_sock_ops_enable_tx_tstamp)";
    case Feature::uprobes: return "uprobes (the uprobe PMU)";
    case Feature::count_: break;
  }
  return "?";
}

const char* feature_key(Feature f) {
  switch (f) {
    case Feature::btf: return "btf";
    case Feature::tracefs: return "tracefs";
    case Feature::ringbuf: return "ringbuf";
    case Feature::syscall_tracepoints: return "syscall_tracepoints";
    case Feature::task_btf: return "task_btf";
    case Feature::rdonly_cast_kfunc: return "rdonly_cast_kfunc";
    case Feature::btf_raw_tracepoints: return "btf_raw_tracepoints";
    case Feature::task_storage: return "task_storage";
    case Feature::socket_tracepoints: return "socket_tracepoints";
    case Feature::tc_programs: return "tc_programs";
    case Feature::kern_ctx_kfunc: return "kern_ctx_kfunc";
    case Feature::sockops_tx_timestamping: return "sockops_tx_timestamping";
    case Feature::uprobes: return "uprobes";
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

bool kernel_has_func(const char* name) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return false;
  bool found = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
  btf__free(vmlinux);
  return found;
}

// A kfunc must be in the kernel's BTF, and a program of the type that will call it must be
// allowed to: which program types may call a kfunc changed between releases, so after the BTF
// lookup a minimal program that calls it is loaded and closed (the verifier has the last word).
// `second_arg_type`: a struct whose BTF id is passed as the second argument (bpf_rdonly_cast),
// or nullptr.
Status probe_kfunc(const char* kfunc, bpf_prog_type type, const char* second_arg_type, const char* since) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    return Status::fail("kernel BTF cannot be read");
  }
  int func_id = btf__find_by_name_kind(vmlinux, kfunc, BTF_KIND_FUNC);
  int type_id = second_arg_type ? btf__find_by_name_kind(vmlinux, second_arg_type, BTF_KIND_STRUCT) : 0;
  btf__free(vmlinux);
  if (func_id <= 0) {
    return Status::fail(std::string("not in kernel BTF (") + since + ")");
  }
  if (second_arg_type && type_id <= 0) {
    return Status::fail(std::string("struct ") + second_arg_type + " not in kernel BTF");
  }
  // A tracepoint's r1 is its context; a tc program passes its own context, as wire_tc does.
  const bool pass_ctx = type == BPF_PROG_TYPE_SCHED_CLS;
  const bpf_insn program[] = {
      pass_ctx ? bpf_insn{BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_1, 0, 0}  // r1 = ctx
               : bpf_insn{BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0},         // r1 = 0
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, type_id},                      // r2 = BTF id
      {BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, func_id},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  int fd = bpf_prog_load(type, "probe_kfunc", "GPL", program, sizeof program / sizeof program[0], nullptr);
  if (fd < 0) {
    return Status::fail(std::string("in kernel BTF, but a ") + (type == BPF_PROG_TYPE_SCHED_CLS ? "tc" : "tracepoint") +
                        " program calling it does not load: " + std::strerror(errno));
  }
  close(fd);
  return Status::ok();
}

// A tp_btf program needs the tracepoint's BTF type (btf_trace_<name>) and a kernel that lets it
// load here: a minimal one is loaded (not attached) and closed, for each tracepoint.
Status probe_btf_tracepoints(std::initializer_list<const char*> names) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    return Status::fail("kernel BTF cannot be read");
  }
  std::vector<int> ids;
  for (const char* name : names) {
    int id = btf__find_by_name_kind(vmlinux, (std::string("btf_trace_") + name).c_str(), BTF_KIND_TYPEDEF);
    if (id <= 0) {
      btf__free(vmlinux);
      return Status::fail(std::string("no btf_trace_") + name + " in kernel BTF");
    }
    ids.push_back(id);
  }
  btf__free(vmlinux);
  const bpf_insn program[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  for (std::size_t i = 0; i < ids.size(); ++i) {
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP,
                .attach_btf_id = static_cast<__u32>(ids[i]));
    int fd =
        bpf_prog_load(BPF_PROG_TYPE_TRACING, "probe_tp_btf", "GPL", program, sizeof program / sizeof program[0], &opts);
    if (fd < 0) {
      return Status::fail(std::string("a tp_btf/") + names.begin()[i] +
                          " program does not load: " + std::strerror(errno));
    }
    close(fd);
  }
  return Status::ok();
}

}  // namespace

Result<KernelFeatures> probe_kernel_features() {
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
  // Without kernel BTF no probe can load its program: each feature is then missing for that reason.
  const Status no_btf = Status::fail("needs kernel BTF");
  const Status rdonly_cast =
      k[Feature::btf] ? probe_kfunc("bpf_rdonly_cast", BPF_PROG_TYPE_TRACEPOINT, "file", "Linux < 6.2") : no_btf;
  set(k, Feature::rdonly_cast_kfunc, static_cast<bool>(rdonly_cast), rdonly_cast.error);
  const Status raw = k[Feature::btf] ? probe_btf_tracepoints({"sys_enter", "sys_exit"}) : no_btf;
  set(k, Feature::btf_raw_tracepoints, static_cast<bool>(raw), raw.error);
  // Looked up by name, not by kernel version: sock_send_length/sock_recv_length are the older
  // pair (around 6.3), tcp_sendmsg_locked is newer, and distributions backport.
  const Status socket_tps =
      k[Feature::btf] ? probe_btf_tracepoints({"tcp_sendmsg_locked", "sock_send_length", "sock_recv_length"}) : no_btf;
  set(k, Feature::socket_tracepoints, static_cast<bool>(socket_tps), socket_tps.error);
  set(k, Feature::task_storage, libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, nullptr) == 1,
      "map type not supported (Linux < 5.11)");
  set(k, Feature::tc_programs, libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, nullptr) == 1,
      "program type not supported (CONFIG_NET_CLS_BPF)");
  const Status kern_ctx =
      k[Feature::btf] ? probe_kfunc("bpf_cast_to_kern_ctx", BPF_PROG_TYPE_SCHED_CLS, nullptr, "Linux < 6.2") : no_btf;
  set(k, Feature::kern_ctx_kfunc, static_cast<bool>(kern_ctx), kern_ctx.error);
  set(k, Feature::sockops_tx_timestamping, kernel_has_func("bpf_sock_ops_enable_tx_tstamp"),
      "bpf_sock_ops_enable_tx_tstamp not in kernel BTF (Linux < 6.14)");
  set(k, Feature::uprobes, exists("/sys/bus/event_source/devices/uprobe/type"), "no uprobe PMU (CONFIG_UPROBE_EVENTS)");
  for (const auto& c : tcp_hook_candidates())
    if (!exists(tracing + "/events/" + c.tracepoint + "/id") &&
        std::find(k.missing_tracepoints.begin(), k.missing_tracepoints.end(), c.tracepoint) ==
            k.missing_tracepoints.end())
      k.missing_tracepoints.push_back(c.tracepoint);
  if (const char* hide = std::getenv(kHideFeaturesEnv); hide && *hide) {
    std::string list = hide;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t comma = list.find(',', start);
      const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? list.size() + 1 : comma + 1;
      bool known = false;
      for (int i = 0; i < static_cast<int>(Feature::count_); ++i) {
        const auto f = static_cast<Feature>(i);
        if (name != feature_key(f)) continue;
        known = true;
        if (k[f]) set(k, f, false, std::string("hidden by ") + kHideFeaturesEnv + " (this kernel has it)");
      }
      if (!known)
        return Result<KernelFeatures>::fail(std::string(kHideFeaturesEnv) + ": '" + name + "' is not a feature name");
    }
  }
  return Result<KernelFeatures>::ok(std::move(k));
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
    std::vector<Feature> raw_tp = btf_walk;
    raw_tp.push_back(Feature::btf_raw_tracepoints);
    raw_tp.push_back(Feature::task_storage);
    std::vector<HookCandidate> t;
    // Per hook: raw_tp entry, btf entry, core_read entry; raw_tp exit, classic exit. Which variant
    // serves is decided once for all hooks (preferred_variant). The raw_tp programs serve every
    // hook (one program each for entry and exit).
    auto add = [&](const char* direction, const char* call, HookCandidate enter_btf, HookCandidate enter_core,
                   HookCandidate exit) {
      std::string what = std::string("tcp ") + direction + ": " + call;
      std::string tp = std::string("syscalls/sys_enter_") + call;
      HookCandidate enter_raw = PROGRAM(sys_enter_tcp);
      enter_raw.hook = what + " entry";
      enter_raw.tracepoint = "raw_syscalls/sys_enter";
      enter_raw.variant = kVariantRawTp;
      enter_raw.needs = raw_tp;
      enter_raw.entry = true;
      HookCandidate exit_raw = PROGRAM(sys_exit_tcp);
      exit_raw.hook = what + " exit";
      exit_raw.tracepoint = "raw_syscalls/sys_exit";
      exit_raw.variant = kVariantRawTp;
      exit_raw.needs = raw_tp;
      enter_btf.hook = enter_core.hook = what + " entry";
      enter_btf.tracepoint = enter_core.tracepoint = tp;
      enter_btf.variant = kVariantBtf;
      enter_btf.needs = btf_walk;
      enter_btf.entry = enter_core.entry = true;
      enter_core.variant = kVariantCoreRead;
      enter_core.needs = base;
      exit.hook = what + " exit";
      exit.tracepoint = std::string("syscalls/sys_exit_") + call;
      exit.variant = kVariantClassic;
      exit.needs = base;
      t.push_back(std::move(enter_raw));
      t.push_back(std::move(enter_btf));
      t.push_back(std::move(enter_core));
      t.push_back(std::move(exit_raw));
      t.push_back(std::move(exit));
    };
    // sock_tp: three hooks of its own. The send's start and the receive are "entry" programs
    // (attached last); the send's end is attached first, so no start waits for an end nobody sees.
    const std::vector<Feature> sock_tp{Feature::btf,
                                       Feature::tracefs,
                                       Feature::ringbuf,
                                       Feature::task_btf,
                                       Feature::rdonly_cast_kfunc,
                                       Feature::task_storage,
                                       Feature::socket_tracepoints};
    auto add_sock_tp = [&](HookCandidate c, const char* hook, const char* tracepoint, bool entry) {
      c.hook = hook;
      c.tracepoint = tracepoint;
      c.variant = kVariantSockTp;
      c.needs = sock_tp;
      c.entry = entry;
      t.push_back(std::move(c));
    };
    add_sock_tp(PROGRAM(sock_send_begin), "tcp send: start (socket layer)", "tcp/tcp_sendmsg_locked", true);
    add_sock_tp(PROGRAM(sock_send_end), "tcp send: end (socket layer)", "sock/sock_send_length", false);
    add_sock_tp(PROGRAM(sock_recv_end), "tcp recv: end (socket layer)", "sock/sock_recv_length", true);
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

namespace {

bool serves(const HookCandidate& c, const std::string& variant) {
  return c.variant == variant ||
         (c.variant == kVariantClassic && (variant == kVariantBtf || variant == kVariantCoreRead));
}

// The first variant, in order of preference, whose every program has what it needs.
// sock_tp first, by measurement (bench/RESULTS.md): three program runs per message instead of four,
// no fd walk, and nothing at all on calls that are not socket calls. Payload capture rides on it
// too (the copy reads the buffer the syscall named from the task's user registers): before, it
// forced a syscall variant, whose programs run on every read and write of a process, socket or not
// (12 program runs per ZeroMQ request/response message instead of 3, bench/RESULTS.md).
// btf before raw_tp, by measurement (bench/overhead_tools/untraced_min.sh): raw_tp makes a hooked but
// untraced read/write ~100 ns cheaper, but runs two programs on EVERY syscall of the host
// (+220 ns on pwrite here, where the classic tracepoints add nothing measurable), and traced
// messages cost the same in BPF either way. raw_tp needs all that btf needs, so it is used
// only when forced (SKEWSCOPE_FORCE_VARIANT=raw_tp).
std::string preferred_variant(const KernelFeatures& features, const std::vector<HookCandidate>& table,
                              const RejectedVariants& rejected) {
  for (const char* variant : {kVariantSockTp, kVariantBtf, kVariantRawTp, kVariantCoreRead}) {
    if (rejected.contains(variant)) continue;
    bool usable = false;
    for (const auto& c : table) {
      if (!serves(c, variant)) continue;
      usable = true;
      for (Feature f : c.needs) usable = usable && features[f];
      if (!usable) break;
    }
    if (usable) return variant;
  }
  return {};
}

}  // namespace

std::vector<HookChoice> choose_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table,
                                     const RejectedVariants& rejected) {
  const char* forced_env = std::getenv(kForceVariantEnv);
  std::string forced = forced_env ? forced_env : "";
  bool forced_known = forced.empty() || forced == kVariantSockTp || forced == kVariantRawTp || forced == kVariantBtf ||
                      forced == kVariantCoreRead;
  const std::string variant = forced.empty() ? preferred_variant(features, table, rejected) : forced;
  std::vector<HookChoice> out;
  for (const auto& candidate : table) {
    HookChoice choice{candidate, true, {}};
    auto reject = [&](std::string why) {
      if (!choice.chosen) return;
      choice.chosen = false;
      choice.reason = std::move(why);
    };
    // What the kernel lacks first: that is why a candidate could never serve here, whichever
    // variant is chosen (doctor's raw_tp lines on Linux 6.1 say "needs bpf_rdonly_cast").
    if (!forced_known)
      reject(std::string(kForceVariantEnv) + "=" + forced + " is not a variant (" + kVariantSockTp + ", " +
             kVariantRawTp + ", " + kVariantBtf + ", " + kVariantCoreRead + ")");
    for (Feature f : candidate.needs)
      if (!features[f]) reject(std::string("needs ") + feature_name(f));
    if (std::find(features.missing_tracepoints.begin(), features.missing_tracepoints.end(), candidate.tracepoint) !=
        features.missing_tracepoints.end())
      reject("tracepoint " + candidate.tracepoint + " does not exist");
    if (auto refused = rejected.find(candidate.variant); refused != rejected.end())
      reject("variant " + candidate.variant + " refused by this kernel at load: " + refused->second);
    if (!serves(candidate, variant))
      reject(forced.empty() ? (variant.empty() ? std::string("no variant has what it needs and loads")
                                               : "variant " + variant + " is used (preferred, all it needs is here)")
                            : std::string(kForceVariantEnv) + "=" + forced);
    for (const auto& earlier : out)
      if (earlier.chosen && earlier.candidate.hook == candidate.hook)
        reject("hook served by " + earlier.candidate.program);
    out.push_back(std::move(choice));
  }
  return out;
}

LoadableHooks choose_loadable_hooks(const KernelFeatures& features, const std::vector<HookCandidate>& table,
                                    const HookLoader& load) {
  LoadableHooks out;
  for (;;) {
    out.choices = choose_hooks(features, table, out.rejected);
    const std::string variant = chosen_variant(out.choices);
    // None left; or a forced variant, which choose_hooks keeps choosing, refused already (its
    // entry programs then carry the refusal and none is chosen).
    if (variant.empty() || out.rejected.contains(variant)) return out;
    const Status loaded = load(out.choices);
    if (loaded) return out;
    out.rejected[variant] = loaded.error;
  }
}

std::string chosen_variant(const std::vector<HookChoice>& choices) {
  for (const auto& c : choices)
    if (c.chosen && c.candidate.entry) return c.candidate.variant;
  return {};
}

const std::vector<FamilyCandidate>& wire_candidates() {
  static const std::vector<FamilyCandidate> table = {
      {CaptureFamily::wire,
       kWireVariantKernCtx,
       "wire_tc",
       {"wire_ingress", "wire_egress"},
       {Feature::btf, Feature::ringbuf, Feature::tc_programs, Feature::kern_ctx_kfunc},
       "tc programs that read the interface's namespace from the packet's device (one object for every "
       "namespace)"},
      {CaptureFamily::wire,
       kWireVariantCtx,
       "wire_tc_ctx",
       {"wire_ingress_ctx", "wire_egress_ctx"},
       {Feature::btf, Feature::ringbuf, Feature::tc_programs},
       "tc programs that read only struct __sk_buff; one object per namespace, its namespace set by the agent"},
  };
  return table;
}

const std::vector<FamilyCandidate>& wire_send_candidates() {
  static const std::vector<FamilyCandidate> table = {
      {CaptureFamily::wire_send,
       "sock_ops",
       "wire_sockops",
       {"wire_sockops"},
       {Feature::btf, Feature::ringbuf, Feature::kern_ctx_kfunc, Feature::rdonly_cast_kfunc,
        Feature::sockops_tx_timestamping},
       "sock_ops TX timestamping callbacks for the sockets of the --wire-cgroup cgroups: the driver's or the NIC's "
       "stamp of each sendmsg's last byte"},
      {CaptureFamily::wire_send,
       "tc_egress",
       "",  // the egress program of the wire variant that runs
       {},
       {Feature::tc_programs},
       "every segment with payload stamped at tc egress of the named interfaces"},
  };
  return table;
}

const std::vector<FamilyCandidate>& rdma_candidates() {
  static const std::vector<FamilyCandidate> table = {
      {CaptureFamily::rdma,
       "uprobes",
       "rdma_verbs",
       {},
       {Feature::btf, Feature::ringbuf, Feature::uprobes},
       "uprobes in libibverbs and the providers' post/poll functions"},
  };
  return table;
}

const char* force_env_of(CaptureFamily family) {
  switch (family) {
    case CaptureFamily::tcp:
    case CaptureFamily::payload: return kForceVariantEnv;
    case CaptureFamily::wire: return "SKEWSCOPE_FORCE_WIRE_VARIANT";
    case CaptureFamily::wire_send: return "SKEWSCOPE_FORCE_WIRE_SEND";
    case CaptureFamily::rdma: return "SKEWSCOPE_FORCE_RDMA_VARIANT";
    case CaptureFamily::count_: break;
  }
  return "";
}

std::vector<CandidateChoice> choose_candidate(const KernelFeatures& features, const std::vector<FamilyCandidate>& table,
                                              const std::map<std::string, std::string>& excluded,
                                              const std::map<std::string, std::string>& refused) {
  const char* env = table.empty() ? nullptr : std::getenv(force_env_of(table.front().family));
  const std::string forced = env ? env : "";
  bool forced_known = forced.empty();
  for (const auto& c : table) forced_known = forced_known || c.variant == forced;
  std::vector<CandidateChoice> out;
  bool taken = false;
  for (const auto& candidate : table) {
    CandidateChoice choice{candidate, true, {}, false};
    auto reject = [&](std::string why) {
      if (!choice.chosen) return;
      choice.chosen = false;
      choice.reason = std::move(why);
    };
    if (!forced_known) {
      std::string variants;
      for (const auto& c : table) variants += (variants.empty() ? "" : ", ") + c.variant;
      reject(std::string(force_env_of(candidate.family)) + "=" + forced + " is not a variant (" + variants + ")");
    }
    for (Feature f : candidate.needs)
      if (!features[f]) reject(std::string("needs ") + feature_name(f));
    if (auto why = excluded.find(candidate.variant); why != excluded.end()) reject(why->second);
    if (auto why = refused.find(candidate.variant); why != refused.end()) {
      if (choice.chosen) choice.rejected_at_load = true;
      reject("refused by this kernel at load: " + why->second);
    }
    if (!forced.empty() && candidate.variant != forced)
      reject(std::string(force_env_of(candidate.family)) + "=" + forced);
    if (taken) reject("variant " + chosen_of(out)->candidate.variant + " is used (preferred, all it needs is here)");
    taken = taken || choice.chosen;
    out.push_back(std::move(choice));
  }
  return out;
}

const CandidateChoice* chosen_of(const std::vector<CandidateChoice>& choices) {
  for (const auto& c : choices)
    if (c.chosen) return &c;
  return nullptr;
}

LoadableCandidate choose_loadable_candidate(const KernelFeatures& features, const std::vector<FamilyCandidate>& table,
                                            const std::map<std::string, std::string>& excluded,
                                            const CandidateLoader& load) {
  LoadableCandidate out;
  std::map<std::string, std::string> refused;
  for (;;) {
    out.choices = choose_candidate(features, table, excluded, refused);
    const CandidateChoice* chosen = chosen_of(out.choices);
    if (!chosen) break;
    const Status loaded = load(chosen->candidate);
    if (loaded) {
      out.status = {true, FamilyReason::running, chosen->candidate.variant, chosen->candidate.description};
      return out;
    }
    refused[chosen->candidate.variant] = loaded.error;
  }
  // None runs: refused at load if any candidate was, else for what the kernel lacks (or the
  // exclusions), each candidate's reason in the detail.
  out.status.up = false;
  out.status.reason = refused.empty() ? FamilyReason::kernel_lacks_feature : FamilyReason::load_failed;
  for (const auto& c : out.choices)
    out.status.detail += (out.status.detail.empty() ? "" : "; ") + c.candidate.variant + ": " + c.reason;
  return out;
}

}  // namespace skewscope
