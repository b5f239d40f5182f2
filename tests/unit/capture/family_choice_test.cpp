// The choice between candidates when the kernel lacks a feature or refuses a candidate at load:
// the TCP variants' fallback, the wire, wire send and RDMA tables, and the family's status.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "capture/features.hpp"
#include "capture/libbpf_log.hpp"
#include "capture/program_verify.hpp"

using namespace skewscope;

namespace {

KernelFeatures everything() {
  KernelFeatures k;
  for (bool& has : k.has) has = true;
  return k;
}

KernelFeatures without(std::initializer_list<Feature> missing) {
  KernelFeatures k = everything();
  for (Feature f : missing) k.has[static_cast<int>(f)] = false;
  return k;
}

const HookChoice& hook(const std::vector<HookChoice>& choices, const std::string& program) {
  for (const auto& c : choices)
    if (c.candidate.program == program) return c;
  FAIL("no candidate " << program);
  return choices.front();
}

const CandidateChoice& candidate(const std::vector<CandidateChoice>& choices, const std::string& variant) {
  for (const auto& c : choices)
    if (c.candidate.variant == variant) return c;
  FAIL("no candidate " << variant);
  return choices.front();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Unforced {
  Unforced() {
    for (const char* v : {kForceVariantEnv, "SKEWSCOPE_FORCE_WIRE_VARIANT", "SKEWSCOPE_FORCE_WIRE_SEND",
                          "SKEWSCOPE_FORCE_RDMA_VARIANT"})
      unsetenv(v);
  }
};

}  // namespace

TEST_CASE("a hook's reason names what the kernel lacks before the variant that is used") {
  Unforced clean;
  // Linux 6.1: no bpf_rdonly_cast, no socket-layer tracepoints: core_read serves, and raw_tp's
  // lines say why raw_tp could not (not "variant core_read is used").
  auto choices =
      choose_hooks(without({Feature::rdonly_cast_kfunc, Feature::socket_tracepoints}), tcp_hook_candidates());
  CHECK(chosen_variant(choices) == kVariantCoreRead);
  CHECK(contains(hook(choices, "sys_enter_tcp").reason, "needs bpf_rdonly_cast"));
  CHECK(contains(hook(choices, "enter_write").reason, "needs bpf_rdonly_cast"));
}

TEST_CASE("a variant the kernel refuses at load is passed over for the next one") {
  Unforced clean;
  std::vector<std::string> attempts;
  LoadableHooks l = choose_loadable_hooks(without({Feature::socket_tracepoints}), tcp_hook_candidates(),
                                          [&](const std::vector<HookChoice>& choices) {
                                            attempts.push_back(chosen_variant(choices));
                                            if (chosen_variant(choices) == kVariantBtf)
                                              return Status::fail("R0 invalid mem access 'scalar'");
                                            return Status::ok();
                                          });
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0] == kVariantBtf);
  // raw_tp needs all btf needs and more, but was not refused itself: tried next, in order.
  CHECK(attempts[1] == kVariantRawTp);
  CHECK(chosen_variant(l.choices) == kVariantRawTp);
  CHECK(l.rejected.at(kVariantBtf) == "R0 invalid mem access 'scalar'");
  CHECK(contains(hook(l.choices, "enter_write").reason, "refused by this kernel at load: R0 invalid mem access"));
}

TEST_CASE("when every variant is refused nothing is chosen, and each says why") {
  Unforced clean;
  int calls = 0;
  LoadableHooks l = choose_loadable_hooks(everything(), tcp_hook_candidates(), [&](const auto&) {
    ++calls;
    return Status::fail("R2 unbounded memory access");
  });
  CHECK(calls == 4);  // sock_tp, btf, raw_tp, core_read
  CHECK(chosen_variant(l.choices).empty());
  CHECK(l.rejected.size() == 4);
  CHECK(contains(hook(l.choices, "enter_read_core").reason, "refused by this kernel at load"));
}

TEST_CASE("a forced variant that the kernel refuses is not replaced") {
  Unforced clean;
  setenv(kForceVariantEnv, kVariantCoreRead, 1);
  int calls = 0;
  LoadableHooks l = choose_loadable_hooks(everything(), tcp_hook_candidates(), [&](const auto&) {
    ++calls;
    return Status::fail("refused");
  });
  unsetenv(kForceVariantEnv);
  CHECK(calls == 1);
  CHECK(chosen_variant(l.choices).empty());
}

TEST_CASE("wire: kern_ctx where the kfunc is, ctx without it, forced ctx anywhere") {
  Unforced clean;
  auto all = choose_candidate(everything(), wire_candidates());
  REQUIRE(chosen_of(all));
  CHECK(chosen_of(all)->candidate.variant == kWireVariantKernCtx);
  CHECK(contains(candidate(all, kWireVariantCtx).reason, "variant kern_ctx is used"));

  auto old_kernel = choose_candidate(without({Feature::kern_ctx_kfunc}), wire_candidates());
  REQUIRE(chosen_of(old_kernel));
  CHECK(chosen_of(old_kernel)->candidate.variant == kWireVariantCtx);
  CHECK(contains(candidate(old_kernel, kWireVariantKernCtx).reason, "needs bpf_cast_to_kern_ctx"));

  setenv("SKEWSCOPE_FORCE_WIRE_VARIANT", "ctx", 1);
  auto forced = choose_candidate(everything(), wire_candidates());
  CHECK(chosen_of(forced)->candidate.variant == kWireVariantCtx);
  CHECK(candidate(forced, kWireVariantKernCtx).reason == "SKEWSCOPE_FORCE_WIRE_VARIANT=ctx");
  setenv("SKEWSCOPE_FORCE_WIRE_VARIANT", "nosuch", 1);
  auto unknown = choose_candidate(everything(), wire_candidates());
  unsetenv("SKEWSCOPE_FORCE_WIRE_VARIANT");
  CHECK(chosen_of(unknown) == nullptr);
  CHECK(contains(candidate(unknown, kWireVariantCtx).reason, "is not a variant (kern_ctx, ctx)"));
}

TEST_CASE("wire: a refused variant falls back; the family's status says running, lacking or refused") {
  Unforced clean;
  std::vector<std::string> tried;
  auto fallback = choose_loadable_candidate(everything(), wire_candidates(), {}, [&](const FamilyCandidate& c) {
    tried.push_back(c.variant);
    return c.variant == kWireVariantKernCtx ? Status::fail("extern (func ksym) 'bpf_cast_to_kern_ctx': not found")
                                            : Status::ok();
  });
  CHECK(tried == std::vector<std::string>{kWireVariantKernCtx, kWireVariantCtx});
  CHECK(fallback.status.up);
  CHECK(fallback.status.reason == FamilyReason::running);
  CHECK(fallback.status.variant == kWireVariantCtx);
  CHECK(candidate(fallback.choices, kWireVariantKernCtx).rejected_at_load);

  auto refused = choose_loadable_candidate(everything(), wire_candidates(), {},
                                           [](const FamilyCandidate&) { return Status::fail("Permission denied"); });
  CHECK_FALSE(refused.status.up);
  CHECK(refused.status.reason == FamilyReason::load_failed);
  CHECK(contains(refused.status.detail, "ctx: refused by this kernel at load: Permission denied"));

  int calls = 0;
  auto lacking = choose_loadable_candidate(without({Feature::tc_programs}), wire_candidates(), {},
                                           [&](const FamilyCandidate&) { return ++calls, Status::ok(); });
  CHECK(calls == 0);
  CHECK_FALSE(lacking.status.up);
  CHECK(lacking.status.reason == FamilyReason::kernel_lacks_feature);
  CHECK(contains(lacking.status.detail, "needs tc (clsact) BPF programs"));
  CHECK(std::string(family_reason_name(lacking.status.reason)) == "kernel_lacks_feature");
}

TEST_CASE("wire send side: sock_ops only with --wire-cgroup and the 6.14 callbacks, else tc egress") {
  Unforced clean;
  auto with_cgroup = choose_candidate(everything(), wire_send_candidates());
  CHECK(chosen_of(with_cgroup)->candidate.variant == "sock_ops");
  auto no_cgroup = choose_candidate(everything(), wire_send_candidates(), {{"sock_ops", "no --wire-cgroup given"}});
  CHECK(chosen_of(no_cgroup)->candidate.variant == "tc_egress");
  CHECK(candidate(no_cgroup, "sock_ops").reason == "no --wire-cgroup given");
  auto debian12 =
      choose_candidate(without({Feature::sockops_tx_timestamping, Feature::kern_ctx_kfunc, Feature::rdonly_cast_kfunc}),
                       wire_send_candidates());
  CHECK(chosen_of(debian12)->candidate.variant == "tc_egress");
  CHECK(contains(candidate(debian12, "sock_ops").reason, "needs bpf_cast_to_kern_ctx"));
  setenv("SKEWSCOPE_FORCE_WIRE_SEND", "tc_egress", 1);
  auto forced = choose_candidate(everything(), wire_send_candidates());
  unsetenv("SKEWSCOPE_FORCE_WIRE_SEND");
  CHECK(chosen_of(forced)->candidate.variant == "tc_egress");
}

TEST_CASE("rdma: off with the reason when the kernel lacks uprobes") {
  Unforced clean;
  auto l = choose_loadable_candidate(without({Feature::uprobes}), rdma_candidates(), {},
                                     [](const FamilyCandidate&) { return Status::ok(); });
  CHECK_FALSE(l.status.up);
  CHECK(l.status.reason == FamilyReason::kernel_lacks_feature);
  CHECK(contains(l.status.detail, "uprobes"));
}

TEST_CASE("a verdict is the verifier's last lines, not libbpf's summary after them") {
  const std::string log =
      "libbpf: prog 'exit_write': BPF program load failed: Permission denied\n"
      "libbpf: prog 'exit_write': -- BEGIN PROG LOAD LOG --\n"
      "87: if r3 > r1 goto pc+1\n"
      "94: call bpf_probe_read_user#112\n"
      "R2 unbounded memory access, use 'var &= const' or 'if (var < const)'\n"
      "processed 120 insns\n"
      "-- END PROG LOAD LOG --\n"
      "libbpf: prog 'exit_write': failed to load: -13\n"
      "libbpf: failed to load object 'tcp_syscalls'\n";
  CHECK(verdict_line(log, 2) ==
        "R2 unbounded memory access, use 'var &= const' or 'if (var < const)' | processed 120 insns");
  CHECK(verdict_line("libbpf: failed to find BTF for extern 'bpf_cast_to_kern_ctx'\n\n", 3) ==
        "libbpf: failed to find BTF for extern 'bpf_cast_to_kern_ctx'");
  CHECK(verdict_line("libbpf: prog 'sock_send_begin': failed to find kernel BTF type ID of 'tcp_sendmsg_locked': -3\n"
                     "libbpf: prog 'sock_send_begin': failed to prepare load attributes: -3\n"
                     "libbpf: prog 'sock_send_begin': failed to load: -3\n"
                     "libbpf: failed to load object 'tcp_syscalls'\n",
                     1) ==
        "libbpf: prog 'sock_send_begin': failed to find kernel BTF type ID of 'tcp_sendmsg_locked': -3");
  CHECK(last_lines("a\nb\n\nc\n", 2) == "b\n\nc");
  CHECK(last_lines("", 3).empty());
}

TEST_CASE("every BPF object is built in and each program of the candidate tables is in its object") {
  for (const char* name : {"tcp_syscalls", "wire_tc", "wire_tc_ctx", "wire_sockops", "rdma_verbs"}) {
    const BpfObjectImage* image = find_bpf_object(name);
    REQUIRE(image);
    CHECK(image->size > 0);
  }
  CHECK(find_bpf_object("nosuch") == nullptr);
}
