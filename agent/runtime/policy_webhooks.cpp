#include "runtime/policy_webhooks.hpp"

#include <httplib.h>

#include <chrono>
#include <vector>

#include "capture/clock_mapping.hpp"
#include "policy/alert_payload.hpp"
#include "skewscope/prometheus_text.hpp"

namespace skewscope {
namespace {

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* kind_name(PolicyWebhooks::Kind k) {
  return k == PolicyWebhooks::Kind::alertmanager ? "alertmanager" : "webhook";
}

}  // namespace

PolicyWebhooks::PolicyWebhooks(std::string agent, std::string generator_url)
    : agent_(std::move(agent)), generator_url_(std::move(generator_url)) {}

PolicyWebhooks::~PolicyWebhooks() { stop(); }

void PolicyWebhooks::start() {
  thread_ = std::thread([this] { run(); });
}

void PolicyWebhooks::request_stop() {
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void PolicyWebhooks::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void PolicyWebhooks::submit(policy::DegradedEdge edge) {
  const auto& degraded = edge.state.policy.degraded;
  if (!degraded.alertmanager_url && !degraded.webhook_url) return;
  const std::string& name = edge.state.policy.name;
  const std::int64_t now_unix = unix_now_ns();
  std::lock_guard guard(lock_);
  if (edge.firing) fired_unix_ns_[name] = now_unix;
  policy::AlertContext context{agent_, generator_url_, fired_unix_ns_.count(name) ? fired_unix_ns_[name] : now_unix,
                               edge.firing ? std::nullopt : std::optional<std::int64_t>(now_unix)};
  auto put = [&](Kind kind, std::string url, std::string body) {
    Delivery& d = deliveries_[{name, kind}];
    if (d.pending && !d.url.empty()) ++counts_[static_cast<int>(kind)].superseded;
    d = Delivery{std::move(url), std::move(body), edge.firing, true, monotonic_now_ns(), kFirstBackoffNs};
  };
  if (degraded.alertmanager_url) {
    std::string base = *degraded.alertmanager_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    put(Kind::alertmanager, base + "/api/v2/alerts", policy::alertmanager_alerts(edge.state, context).dump());
  }
  if (degraded.webhook_url)
    put(Kind::webhook, *degraded.webhook_url, policy::webhook_body(edge.state, context, monotonic_now_ns()).dump());
  if (!edge.firing) fired_unix_ns_.erase(name);
  wake_.notify_all();
}

bool PolicyWebhooks::post(const std::string& url, const std::string& body) {
  // scheme://host[:port] and the path after it (policy_spec.cpp checked the scheme and host).
  const auto host_start = url.find("://") + 3;
  const auto path_start = url.find('/', host_start);
  httplib::Client client(url.substr(0, path_start));
  // Short enough that a stop waits at most about 2 s for a POST in flight (the agent's whole
  // teardown has 2.5 s); a receiver slower than this is a failed delivery, retried later.
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(2, 0);
  client.set_write_timeout(2, 0);
  auto answer = client.Post(path_start == std::string::npos ? "/" : url.substr(path_start), body, "application/json");
  return answer && answer->status >= 200 && answer->status < 300;
}

void PolicyWebhooks::run() {
  std::unique_lock guard(lock_);
  while (!stopping_) {
    wake_.wait_for(guard, std::chrono::milliseconds(200));
    if (stopping_) break;
    const std::int64_t now = monotonic_now_ns();
    struct Due {
      std::pair<std::string, Kind> key;
      std::string url, body;
    };
    std::vector<Due> due;
    for (auto& [key, d] : deliveries_) {
      const bool resend = !d.pending && d.firing && key.second == Kind::alertmanager;
      if ((d.pending || resend) && now >= d.next_attempt_ns) due.push_back({key, d.url, d.body});
    }
    for (const Due& item : due) {
      if (stopping_) break;
      guard.unlock();  // never hold the lock over the network: submit() must not wait for a receiver
      const bool ok = post(item.url, item.body);
      guard.lock();
      auto it = deliveries_.find(item.key);
      auto& counts = counts_[static_cast<int>(item.key.second)];
      ++(ok ? counts.delivered : counts.failed);
      if (it == deliveries_.end() || it->second.body != item.body) continue;  // replaced meanwhile
      Delivery& d = it->second;
      if (ok) {
        d.pending = false;
        d.backoff_ns = kFirstBackoffNs;
        d.next_attempt_ns = monotonic_now_ns() + kResendFiringNs;
      } else {
        d.next_attempt_ns = monotonic_now_ns() + d.backoff_ns;
        d.backoff_ns = std::min(d.backoff_ns * 2, kMaxBackoffNs);
      }
    }
  }
}

void PolicyWebhooks::append_metrics(std::string& out) const {
  PrometheusWriter w(out);
  w.family("skewscope_policy_webhook_deliveries_total", "counter",
           "Degraded-mode notifications posted to the policies' receivers, by result: delivered (2xx), failed "
           "(retried with backoff) or superseded (replaced by a newer edge before delivery).");
  for (Kind k : {Kind::alertmanager, Kind::webhook}) {
    const auto& c = counts_[static_cast<int>(k)];
    w.sample("skewscope_policy_webhook_deliveries_total", {{"receiver", kind_name(k)}, {"result", "delivered"}},
             static_cast<double>(c.delivered.load()));
    w.sample("skewscope_policy_webhook_deliveries_total", {{"receiver", kind_name(k)}, {"result", "failed"}},
             static_cast<double>(c.failed.load()));
    w.sample("skewscope_policy_webhook_deliveries_total", {{"receiver", kind_name(k)}, {"result", "superseded"}},
             static_cast<double>(c.superseded.load()));
  }
}

}  // namespace skewscope
