#include "runtime/policy_runtime.hpp"

#include <pthread.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "capture/clock_mapping.hpp"
#include "policy/evidence.hpp"
#include "runtime/policy_webhooks.hpp"

namespace skewscope {
namespace {

constexpr std::int64_t kEvaluateEveryNs = 1'000'000'000;

Result<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<std::string>::fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Result<std::string>::fail("cannot read " + path);
  return Result<std::string>::ok(text.str());
}

}  // namespace

void add_policy_routes(HttpApi& api, PolicyRuntime* runtime) {
  auto error = [](int status, const std::string& message) {
    return HttpReply{status, nlohmann::json{{"error", message}}.dump() + "\n", "application/json"};
  };
  if (runtime == nullptr) {
    api.add_tenant_route("/api/v1/policies", [error](const HttpApi::Query&) {
      return error(404, "no policies: start the agent with --policy-file FILE (docs/policies.md)");
    });
    return;
  }
  api.add_tenant_route("/api/v1/policies", [runtime, error](const HttpApi::Query& q) {
    nlohmann::json all = runtime->policies_json(monotonic_now_ns());
    // A tenant's view (docs/tenants.md): its own policies, not the file's path or errors.
    if (auto t = q.find("tenant"); t != q.end()) all = tenant_policies_json(all, t->second);
    if (auto it = q.find("policy"); it != q.end()) {
      nlohmann::json only = nlohmann::json::array();
      for (const auto& p : all["policies"])
        if (p["name"] == it->second) only.push_back(p);
      if (only.empty())
        return error(404, all.contains("file")
                              ? "no policy named '" + it->second + "' in " + all["file"]["path"].get<std::string>()
                              : "no policy named '" + it->second + "' in this tenant");
      all["policies"] = only;
    }
    return HttpReply{200, all.dump() + "\n", "application/json"};
  });
  api.add_metrics([runtime](std::string& out) { runtime->append_metrics(out); });
}

sigset_t block_reload_signal() {
  sigset_t reload;
  sigemptyset(&reload);
  sigaddset(&reload, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &reload, nullptr);
  return reload;
}

Result<std::unique_ptr<PolicyRuntime>> PolicyRuntime::load(const std::string& path, LogFn log, TenantMap flag_tenants) {
  std::unique_ptr<PolicyRuntime> runtime(new PolicyRuntime(path, std::move(log)));
  runtime->flag_tenants_ = std::move(flag_tenants);
  runtime->file_.path = path;
  if (Status loaded = runtime->reload(); !loaded) return Result<std::unique_ptr<PolicyRuntime>>::fail(loaded.error);
  return Result<std::unique_ptr<PolicyRuntime>>::ok(std::move(runtime));
}

PolicyRuntime::~PolicyRuntime() { stop(); }

bool PolicyRuntime::file_changed() {
  struct stat st {};
  std::optional<FileIdentity> now;
  if (::stat(path_.c_str(), &st) == 0)
    now = FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec};
  return now != seen_;
}

Status PolicyRuntime::reload() {
  struct stat st {};
  seen_.reset();
  if (::stat(path_.c_str(), &st) == 0)
    seen_ = FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec};
  auto text = read_whole(path_);
  Result<policy::PolicySet> parsed = text ? policy::parse_policies(*text) : Result<policy::PolicySet>::fail(text.error);
  std::lock_guard guard(lock_);
  if (parsed) parsed = with_tenants(std::move(*parsed.value));
  if (!parsed) {
    const std::string why = path_ + ": " + parsed.error;
    ++file_.rejected;
    file_.last_error = why;
    if (file_.loads > 0)
      log_("policy file rejected, the " + std::to_string(tracker_.states().size()) +
           " policies before stay in force: " + why);
    return Status::fail(why);
  }
  tracker_.set_policies(*parsed);
  ++file_.loads;
  file_.last_error.reset();
  log_("policy file " + path_ + " loaded: " + std::to_string(parsed->policies.size()) + " policies");
  return Status::ok();
}

// The tenants of the file checked against those in force, and every policy bound to its tenant.
Result<policy::PolicySet> PolicyRuntime::with_tenants(policy::PolicySet set) {
  using R = Result<policy::PolicySet>;
  const bool declares = !set.tenants.empty();
  if (declares && !flag_tenants_.empty())
    return R::fail("tenants: declared both here and by --tenant; declare them in one place (docs/tenants.md)");
  if (file_tenants_ && set.tenants.tenants() != file_tenants_->tenants())
    return R::fail("tenants: changed since the agent started; restart it to change tenants (docs/tenants.md)");
  if (declares && file_.loads > 0 && !file_tenants_)
    return R::fail("tenants: added since the agent started; restart it to declare tenants (docs/tenants.md)");
  if (Status bound = policy::bind_policy_tenants(set, declares ? set.tenants : flag_tenants_); !bound)
    return R::fail(bound.error);
  if (declares && !file_tenants_) file_tenants_ = set.tenants;
  return R::ok(std::move(set));
}

TenantMap PolicyRuntime::tenants() const {
  std::lock_guard guard(lock_);
  return file_tenants_ ? *file_tenants_ : flag_tenants_;
}

std::vector<policy::DegradedEdge> PolicyRuntime::evaluate(const AgentReport& report, std::int64_t now_ns) {
  std::lock_guard guard(lock_);
  return tracker_.evaluate(now_ns, [&report](const policy::Policy& p) { return policy::covered_evidence(p, report); });
}

void PolicyRuntime::start(ReportFn report, const sigset_t& reload_signal, PolicyWebhooks* webhooks) {
  thread_ = std::thread(
      [this, report = std::move(report), reload_signal, webhooks] { run(report, reload_signal, webhooks); });
}

void PolicyRuntime::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void PolicyRuntime::run(const ReportFn& report, sigset_t reload_signal, PolicyWebhooks* webhooks) {
  std::int64_t next_evaluation = monotonic_now_ns();
  while (!stopping_) {
    timespec step{0, 200'000'000};
    const bool hangup = sigtimedwait(&reload_signal, nullptr, &step) == SIGHUP;
    if (hangup) log_("SIGHUP: reloading the policy file");
    if (hangup || file_changed()) (void)reload();  // a refusal is logged and counted by reload()
    const std::int64_t now = monotonic_now_ns();
    if (now < next_evaluation) continue;
    next_evaluation = now + kEvaluateEveryNs;
    // The report is taken under the core's lock, and the policies' own lock only after it is released.
    AgentReport snapshot = report();
    auto edges = evaluate(snapshot, now);
    if (webhooks)
      for (auto& edge : edges) webhooks->submit(std::move(edge));
  }
}

nlohmann::json PolicyRuntime::policies_json(std::int64_t now_ns) const {
  std::lock_guard guard(lock_);
  return policy::policies_json(tracker_.states(), file_, now_ns);
}

void PolicyRuntime::append_metrics(std::string& out) const {
  std::lock_guard guard(lock_);
  policy::append_policy_metrics(out, tracker_.states(), file_);
}

std::optional<bool> PolicyRuntime::trusted(const std::string& src, const std::string& dst, Transport transport) const {
  std::lock_guard guard(lock_);
  std::optional<bool> out;
  for (const auto& s : tracker_.states()) {
    if (!s.policy.degraded.untrusted_spans || !s.policy.covers(src, dst, transport)) continue;
    bool met = false;
    for (const auto& p : s.verdict.pairs) {
      const auto& e = p.evidence;
      if (e.transport == transport && ((e.src == src && e.dst == dst) || (e.src == dst && e.dst == src)))
        met = p.verdict == policy::Verdict::met;
    }
    out = out.value_or(true) && met;
  }
  return out;
}

}  // namespace skewscope
