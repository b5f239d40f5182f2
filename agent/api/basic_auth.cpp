#include "api/basic_auth.hpp"

#include <utility>

namespace skewscope {
namespace {

// Time depends on the length only, not on where the first difference is.
bool equal_constant_time(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users, CheckFn check)
    : users_(std::move(users)), slow_check_(std::move(check)) {}

BasicAuth::Verdict BasicAuth::check(const char* user, const char* password, std::int64_t now_ns) {
  Verdict verdict = decide(user, password, now_ns);
  if (verdict == Verdict::denied) ++denied_;
  if (verdict == Verdict::busy) ++busy_;
  return verdict;
}

BasicAuth::Verdict BasicAuth::decide(const char* user, const char* password, std::int64_t now_ns) {
  if (user == nullptr || password == nullptr) return Verdict::denied;
  auto known = users_.find(user);
  if (known == users_.end()) return Verdict::denied;  // no bcrypt for unknown users: nothing to spend
  auto cached = verified_.find(user);
  if (cached != verified_.end() && equal_constant_time(cached->second, password)) return Verdict::allowed;
  const std::int64_t second = now_ns / 1'000'000'000;
  if (second != budget_second_) {
    budget_second_ = second;
    checks_this_second_ = 0;
  }
  if (checks_this_second_ >= kChecksPerSecond) return Verdict::busy;
  ++checks_this_second_;
  if (!slow_check_(password, known->second)) return Verdict::denied;
  verified_[user] = password;
  return Verdict::allowed;
}

}  // namespace skewscope
