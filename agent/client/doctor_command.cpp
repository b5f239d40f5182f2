#include "client/doctor_command.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "capture/features.hpp"
#include "capture/program_verify.hpp"
#include "capture/tracefs.hpp"
#include "client/wire_doctor.hpp"
#include "skewscope/abi/payload_event.h"

namespace skewscope {
namespace {

// With --payload-bytes the syscall programs run their payload copy: verified with it enabled.
const RodataValues kPayloadOn = {{"payload_max", SKEWSCOPE_PAYLOAD_MAX}};

// What the agent loads for a TCP choice: the chosen programs and the in-flight cleanup.
std::vector<std::string> tcp_programs_of(const std::vector<HookChoice>& choices) {
  std::vector<std::string> programs{"forget_exited_thread"};
  for (const auto& c : choices)
    if (c.chosen && std::find(programs.begin(), programs.end(), c.candidate.program) == programs.end())
      programs.push_back(c.candidate.program);
  return programs;
}

LoadableHooks doctor_tcp(const KernelFeatures& k, bool payload) {
  return choose_loadable_hooks(k, tcp_hook_candidates(), [&](const std::vector<HookChoice>& choices) {
    return test_load_programs(*find_bpf_object("tcp_syscalls"), tcp_programs_of(choices),
                              payload ? kPayloadOn : RodataValues{});
  });
}

Status test_load_candidate(const FamilyCandidate& c) {
  const BpfObjectImage* object = find_bpf_object(c.object);
  if (!object) return Status::fail("no BPF object " + c.object);
  return test_load_programs(*object, c.programs);  // none named: every program of the object
}

void print_family(const char* family, const LoadableCandidate& l) {
  std::cout << "  " << family << ": "
            << (l.status.up ? "uses " + l.status.variant
                            : std::string("off (") + family_reason_name(l.status.reason) + ")")
            << "\n";
  for (const auto& c : l.choices)
    std::cout << "    " << (c.chosen ? "use  " : "skip ") << c.candidate.variant << "  ("
              << (c.candidate.object.empty() ? "the wire variant's egress program" : c.candidate.object) << ")"
              << (c.chosen ? "  -- " + c.candidate.description : "  -- " + c.reason) << "\n";
}

int run_plain(const KernelFeatures& k) {
  std::cout << "kernel " << k.kernel_release << "\n\nfeatures:\n";
  for (int i = 0; i < static_cast<int>(Feature::count_); ++i) {
    auto f = static_cast<Feature>(i);
    std::cout << "  " << (k[f] ? "yes " : "no  ") << feature_name(f) << "\n";
  }
  for (const auto& note : k.notes) std::cout << "  note: " << note << "\n";
  // The chosen variant is test-loaded; a variant the kernel refuses is passed over (its lines say so).
  std::cout << "\nhooks:\n";
  const LoadableHooks tcp = doctor_tcp(k, false);
  int chosen = 0;
  for (const auto& c : tcp.choices) {
    chosen += c.chosen;
    std::cout << "  " << (c.chosen ? "use  " : "skip ") << c.candidate.program << "  (" << c.candidate.hook << ", "
              << c.candidate.tracepoint << ")" << (c.chosen ? "" : "  -- " + c.reason) << "\n";
  }
  std::cout << "\n" << chosen << " of " << tcp.choices.size() << " programs usable\n";
  const std::string variant = chosen_variant(tcp.choices);
  std::cout << "variant: " << (variant.empty() ? "none" : variant) << "\n";
  for (const auto& [refused, why] : tcp.rejected) std::cout << "refused at load: " << refused << ": " << why << "\n";
  // With --payload-bytes the programs carry the copy, which a kernel may refuse: say what loads then.
  const LoadableHooks payload = doctor_tcp(k, true);
  const std::string with_payload = chosen_variant(payload.choices);
  std::cout << "variant with --payload-bytes: " << (with_payload.empty() ? "none" : with_payload) << "\n";
  for (const auto& [refused, why] : payload.rejected)
    if (!tcp.rejected.contains(refused))
      std::cout << "refused at load with --payload-bytes: " << refused << ": " << why << "\n";

  std::cout << "\noptional capture families (each chosen candidate is test-loaded):\n";
  const LoadableCandidate wire = choose_loadable_candidate(k, wire_candidates(), {}, test_load_candidate);
  print_family("wire (--wire-timestamps)", wire);
  const LoadableCandidate send =
      choose_loadable_candidate(k, wire_send_candidates(), {}, [&](const FamilyCandidate& c) {
        if (!c.object.empty()) return test_load_candidate(c);
        return wire.status.up ? Status::ok() : Status::fail("no wire variant loads");
      });
  print_family("wire send side (sock_ops only with --wire-cgroup)", send);
  print_family("rdma (--rdma)", choose_loadable_candidate(k, rdma_candidates(), {}, test_load_candidate));
  print_wire_doctor(std::cout, wire.status.up ? wire.status.variant : "");
  return variant.empty() ? 1 : 0;  // without an entry program nothing is captured
}

// The TCP variants and the programs each needs, from the candidate table.
std::map<std::string, std::set<std::string>> tcp_variant_programs() {
  std::map<std::string, std::set<std::string>> out;
  for (const char* v : {kVariantSockTp, kVariantBtf, kVariantRawTp, kVariantCoreRead}) {
    std::set<std::string>& programs = out[v];
    programs.insert("forget_exited_thread");
    for (const auto& c : tcp_hook_candidates()) {
      const bool classic =
          c.variant == kVariantClassic && (std::string(v) == kVariantBtf || std::string(v) == kVariantCoreRead);
      if (c.variant == v || classic) programs.insert(c.program);
    }
  }
  return out;
}

int run_verify(const KernelFeatures& k, bool json) {
  std::vector<ProgramVerdict> verdicts;
  for (const auto& object : bpf_object_images()) {
    auto v = verify_each_program(object, object.name == "tcp_syscalls" ? kPayloadOn : RodataValues{});
    verdicts.insert(verdicts.end(), v.begin(), v.end());
  }
  auto loaded = [&](const std::string& object, const std::string& program) {
    for (const auto& v : verdicts)
      if (v.object == object && v.program == program) return v.loaded;
    return false;
  };
  auto all_loaded = [&](const std::string& object, const std::vector<std::string>& programs) {
    bool any = false;
    for (const auto& v : verdicts) {
      if (v.object != object ||
          (!programs.empty() && std::find(programs.begin(), programs.end(), v.program) == programs.end()))
        continue;
      any = true;
      if (!v.loaded) return false;
    }
    return any;
  };
  // family -> the variants whose programs all load here
  std::map<std::string, std::vector<std::string>> loadable;
  for (const auto& [variant, programs] : tcp_variant_programs()) {
    bool ok = true;
    for (const auto& p : programs) ok = ok && loaded("tcp_syscalls", p);
    if (!ok) continue;
    loadable["tcp"].push_back(variant);
    loadable["payload"].push_back(variant);  // verified with payload_max set: every variant copies
  }
  for (const auto& c : wire_candidates())
    if (all_loaded(c.object, c.programs)) loadable["wire"].push_back(c.variant);
  for (const auto& c : wire_send_candidates())
    if (c.object.empty() ? loadable.contains("wire") : all_loaded(c.object, c.programs))
      loadable["wire_send"].push_back(c.variant);
  for (const auto& c : rdma_candidates())
    if (all_loaded(c.object, c.programs)) loadable["rdma"].push_back(c.variant);
  bool every = true;
  for (int i = 0; i < static_cast<int>(CaptureFamily::count_); ++i)
    every = every && loadable.contains(family_name(static_cast<CaptureFamily>(i)));

  if (json) {
    nlohmann::json programs = nlohmann::json::array(), families = nlohmann::json::object();
    for (const auto& v : verdicts)
      programs.push_back({{"object", v.object},
                          {"program", v.program},
                          {"loaded", v.loaded},
                          {"verdict", v.loaded ? "" : verdict_line(v.log)},
                          {"log", v.log}});
    for (int i = 0; i < static_cast<int>(CaptureFamily::count_); ++i) {
      const char* f = family_name(static_cast<CaptureFamily>(i));
      families[f] = {{"loadable", loadable.contains(f)}, {"variants", loadable[f]}};
    }
    std::cout << nlohmann::json{{"kernel", k.kernel_release},
                                {"programs", programs},
                                {"families", families},
                                {"every_family_loads", every}}
                     .dump(2)
              << "\n";
  } else {
    for (const auto& v : verdicts)
      std::cout << v.object << " " << v.program << " " << (v.loaded ? "loaded" : "rejected: " + verdict_line(v.log))
                << "\n";
    for (int i = 0; i < static_cast<int>(CaptureFamily::count_); ++i) {
      const char* f = family_name(static_cast<CaptureFamily>(i));
      std::cout << "family " << f << ": ";
      if (!loadable.contains(f)) {
        std::cout << "no candidate loads\n";
        continue;
      }
      std::string list;
      for (const auto& v : loadable[f]) list += (list.empty() ? "" : ", ") + v;
      std::cout << "loadable (" << list << ")\n";
    }
  }
  return every ? 0 : 1;
}

}  // namespace

int run_doctor(bool verify, bool json) {
  const Status tracefs = ensure_tracefs();
  auto probed = probe_kernel_features();
  if (!probed) {
    std::cerr << "skewscope doctor: " << probed.error << "\n";
    return 2;
  }
  KernelFeatures k = std::move(*probed);
  if (!tracefs) k.notes.push_back("tracefs: " + tracefs.error);
  return verify ? run_verify(k, json) : run_plain(k);
}

}  // namespace skewscope
