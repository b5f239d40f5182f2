// Delivery of the policies' degraded-mode edges to their webhooks (Alertmanager v2 and plain
// JSON), on a thread of its own so that a slow or dead receiver never holds the capture or the
// evaluation: submit() only records what each receiver should be told. A failed delivery is
// counted and retried with exponential backoff (1 s doubling to 30 s) until it succeeds or a newer
// edge of the same policy replaces it; a firing alert is re-sent to Alertmanager every 60 s, as
// its API expects of an alert that is still active.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "policy/policy_tracker.hpp"

namespace skewscope {

class PolicyWebhooks {
 public:
  enum class Kind { alertmanager, webhook };
  static constexpr std::int64_t kFirstBackoffNs = 1'000'000'000;
  static constexpr std::int64_t kMaxBackoffNs = 30'000'000'000;
  static constexpr std::int64_t kResendFiringNs = 60'000'000'000;

  // `agent`: this agent's name (the alerts' instance label); `generator_url`: its policies route.
  PolicyWebhooks(std::string agent, std::string generator_url);
  ~PolicyWebhooks();
  PolicyWebhooks(const PolicyWebhooks&) = delete;
  PolicyWebhooks& operator=(const PolicyWebhooks&) = delete;

  void start();
  // Asks the thread to end after the POST in flight (if any) without waiting; stop() waits.
  void request_stop();
  void stop();
  void submit(policy::DegradedEdge edge);
  void append_metrics(std::string& out) const;

 private:
  struct Delivery {
    std::string url;  // the full URL posted to
    std::string body;
    bool firing = false;
    bool pending = true;  // not delivered yet
    std::int64_t next_attempt_ns = 0;
    std::int64_t backoff_ns = kFirstBackoffNs;
  };
  struct Counts {
    std::atomic<std::uint64_t> delivered{0}, failed{0}, superseded{0};
  };
  void run();
  bool post(const std::string& url, const std::string& body);

  std::string agent_;
  std::string generator_url_;
  mutable std::mutex lock_;
  std::condition_variable wake_;
  std::map<std::pair<std::string, Kind>, Delivery> deliveries_;  // by policy name and receiver kind
  std::map<std::string, std::int64_t> fired_unix_ns_;            // startsAt of each firing policy
  std::array<Counts, 2> counts_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace skewscope
