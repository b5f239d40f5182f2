// The candidate table's choice between variants, from a given feature set (no kernel needed: the
// tracepoints a kernel lacks are part of the feature set, none in these).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "capture/features.hpp"

using namespace skewscope;

namespace {

KernelFeatures everything() {
  KernelFeatures k;
  for (bool& has : k.has) has = true;
  return k;
}

const HookChoice& choice_of(const std::vector<HookChoice>& choices, const std::string& program) {
  for (const auto& c : choices)
    if (c.candidate.program == program) return c;
  FAIL("no candidate " << program);
  return choices.front();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("sock_tp is preferred when the kernel has all it needs, payload capture or not") {
  unsetenv(kForceVariantEnv);
  const auto& table = tcp_hook_candidates();

  auto plain = choose_hooks(everything(), table);
  // Chosen, unless this machine lacks the tracepoint (then that is the only reason).
  for (const char* p : {"sock_send_begin", "sock_send_end", "sock_recv_end"}) {
    const auto& c = choice_of(plain, p);
    CHECK((c.chosen || starts_with(c.reason, "tracepoint ")));
  }
  CHECK(starts_with(choice_of(plain, "enter_write").reason, "variant sock_tp is used"));
  CHECK(starts_with(choice_of(plain, "exit_write").reason, "variant sock_tp is used"));
}

TEST_CASE("without the socket-layer tracepoints the btf syscall variant serves") {
  unsetenv(kForceVariantEnv);
  KernelFeatures k = everything();
  k.has[static_cast<int>(Feature::socket_tracepoints)] = false;
  auto choices = choose_hooks(k, tcp_hook_candidates());
  // What the kernel lacks comes first in a hook's reason, before the variant that serves instead.
  CHECK(starts_with(choice_of(choices, "sock_recv_end").reason, "needs socket-layer tracepoints"));
  const auto& enter = choice_of(choices, "enter_read");
  CHECK((enter.chosen || starts_with(enter.reason, "tracepoint ")));
}

TEST_CASE("forcing sock_tp chooses only its programs, and the others say why") {
  setenv(kForceVariantEnv, kVariantSockTp, 1);
  auto choices = choose_hooks(everything(), tcp_hook_candidates());
  unsetenv(kForceVariantEnv);
  const auto& end = choice_of(choices, "sock_send_end");
  CHECK((end.chosen || starts_with(end.reason, "tracepoint ")));
  CHECK(starts_with(choice_of(choices, "enter_write").reason, std::string(kForceVariantEnv) + "=sock_tp"));
}
