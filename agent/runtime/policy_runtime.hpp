// The agent's side of --policy-file (docs/policies.md): the file loaded and validated whole,
// reloaded on SIGHUP and when it changes (a bad file keeps the policies in force, logged and
// counted), and a thread that judges every policy once a second from the agent's report. The
// HTTP routes and /metrics read the newest judgement; edges of a degraded mode go to the webhooks.
#pragma once

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "api/http_api.hpp"
#include "core/agent_report.hpp"
#include "policy/policy_output.hpp"
#include "policy/policy_tracker.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

class PolicyWebhooks;
class PolicyRuntime;

// GET /api/v1/policies[?policy=NAME] and the policy families of /metrics; without a runtime (no
// --policy-file) the route answers 404 saying so.
void add_policy_routes(HttpApi& api, PolicyRuntime* runtime);

// Blocks SIGHUP in the calling thread (and the threads it starts after): the policy thread takes
// it with sigtimedwait. Only with --policy-file, so that without one SIGHUP keeps its default.
sigset_t block_reload_signal();

class PolicyRuntime {
 public:
  using ReportFn = std::function<AgentReport()>;
  using LogFn = std::function<void(const std::string&)>;

  // The first load: a missing or bad file is an error (the agent's usage error). flag_tenants:
  // the --tenant map; a file that declares tenants too is refused (one source of truth).
  static Result<std::unique_ptr<PolicyRuntime>> load(const std::string& path, LogFn log, TenantMap flag_tenants = {});
  ~PolicyRuntime();
  PolicyRuntime(const PolicyRuntime&) = delete;
  PolicyRuntime& operator=(const PolicyRuntime&) = delete;

  // Evaluates once a second from `report` and reloads on `reload_signal` or a changed file, on a
  // thread of its own, until stop(). `webhooks` (optional) receives the degraded-mode edges.
  void start(ReportFn report, const sigset_t& reload_signal, PolicyWebhooks* webhooks);
  void stop();

  // Reads the file again; accepted only if valid as a whole. Thread-safe.
  Status reload();
  // One evaluation from a report taken at now_ns (CLOCK_MONOTONIC). Thread-safe.
  std::vector<policy::DegradedEdge> evaluate(const AgentReport& report, std::int64_t now_ns);

  // The tenants in force: --tenant's, or those the file declared at the first load (a reload that
  // changes them is refused: the endpoint's access is fixed when it starts; docs/tenants.md).
  TenantMap tenants() const;

  nlohmann::json policies_json(std::int64_t now_ns) const;
  void append_metrics(std::string& out) const;
  // Whether spans of this pair may be trusted: nullopt when no policy that flags spans covers it;
  // false while one of them is not met on this pair at its newest evaluation.
  std::optional<bool> trusted(const std::string& src, const std::string& dst, Transport transport) const;

 private:
  PolicyRuntime(std::string path, LogFn log) : path_(std::move(path)), log_(std::move(log)) {}
  void run(const ReportFn& report, sigset_t reload_signal, PolicyWebhooks* webhooks);
  bool file_changed();
  Result<policy::PolicySet> with_tenants(policy::PolicySet set);  // under lock_

  std::string path_;
  LogFn log_;
  mutable std::mutex lock_;  // never held while the core's lock is taken
  policy::PolicyTracker tracker_;
  policy::PolicyFileStatus file_;
  TenantMap flag_tenants_;
  std::optional<TenantMap> file_tenants_;  // set by the first good load of a file that declares tenants
  struct FileIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  std::optional<FileIdentity> seen_;  // of the last load attempt (only the policy thread writes it after start)
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace skewscope
