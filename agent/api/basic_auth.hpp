// Basic auth for the HTTP endpoint (users from --web.config.file), safe to run on the event loop.
//
// A bcrypt check costs tens of milliseconds of CPU on purpose, and the server checks on its one
// event-loop thread: unbounded, wrong passwords alone could keep /metrics from answering. So:
//  - a user's last verified password is remembered (compared in constant time): a scraper that
//    sends the same credentials every time costs one bcrypt check, once;
//  - other checks share a budget of kChecksPerSecond; beyond it the answer is "busy" (429, retry
//    later) without checking, which bounds the loop's bcrypt time to about 1/3 of each second.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace skewscope {

class BasicAuth {
 public:
  enum class Verdict { allowed, denied, busy };
  static constexpr int kChecksPerSecond = 4;
  using CheckFn = std::function<bool(const std::string& password, const std::string& hash)>;

  // users: name -> bcrypt hash. check: the slow comparison (password_matches; a stub in tests).
  BasicAuth(std::map<std::string, std::string> users, CheckFn check);

  bool enabled() const { return !users_.empty(); }
  // user/password as sent (nullptr: no or malformed Authorization header).
  Verdict check(const char* user, const char* password, std::int64_t now_ns);
  std::uint64_t denied_total() const { return denied_; }
  std::uint64_t busy_total() const { return busy_; }

 private:
  Verdict decide(const char* user, const char* password, std::int64_t now_ns);

  std::map<std::string, std::string> users_;
  std::map<std::string, std::string> verified_;  // user -> last password that matched
  CheckFn slow_check_;
  std::int64_t budget_second_ = -1;
  int checks_this_second_ = 0;
  std::uint64_t denied_ = 0, busy_ = 0;
};

}  // namespace skewscope
