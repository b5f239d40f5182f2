#include "health/captured_addresses.hpp"

#include <algorithm>

namespace skewscope {

void CapturedAddresses::learn(const Address& own, std::int64_t seen_ns) {
  for (std::size_t i = 0; i < recent_.size(); ++i) {
    if (recent_seen_[i] && recent_[i] == own) {
      *recent_seen_[i] = std::max(*recent_seen_[i], seen_ns);
      return;
    }
  }
  auto it = last_seen_ns_.find(own);
  if (it == last_seen_ns_.end()) {
    if (last_seen_ns_.size() >= max_addresses_) {
      ++not_learned_;
      return;
    }
    it = last_seen_ns_.emplace(own, seen_ns).first;
  } else {
    it->second = std::max(it->second, seen_ns);  // halves may be learnt slightly out of order
  }
  recent_[1] = recent_[0];
  recent_seen_[1] = recent_seen_[0];
  recent_[0] = own;
  recent_seen_[0] = &it->second;
}

bool CapturedAddresses::captured(const Address& a, std::int64_t now_ns) const {
  auto it = last_seen_ns_.find(a);
  return it != last_seen_ns_.end() && now_ns - it->second < forget_after_ns_;
}

void CapturedAddresses::expire(std::int64_t now_ns) {
  if (now_ns - last_scan_ns_ < forget_after_ns_ / 2) return;
  last_scan_ns_ = now_ns;
  const std::size_t before = last_seen_ns_.size();
  std::erase_if(last_seen_ns_, [&](const auto& entry) { return now_ns - entry.second >= forget_after_ns_; });
  if (last_seen_ns_.size() != before) recent_seen_ = {nullptr, nullptr};  // their entries may be gone
}

}  // namespace skewscope
