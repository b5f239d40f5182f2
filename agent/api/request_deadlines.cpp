#include "api/request_deadlines.hpp"

namespace skewscope {

void RequestDeadlines::opened(std::uintptr_t connection, int fd, std::int64_t now_ns) {
  connections_[connection] = Entry{fd, now_ns, false};
}

void RequestDeadlines::completed(std::uintptr_t connection, std::int64_t now_ns) {
  auto it = connections_.find(connection);
  if (it != connections_.end() && !it->second.cut) it->second.started_ns = now_ns;
}

void RequestDeadlines::closed(std::uintptr_t connection) { connections_.erase(connection); }

std::vector<int> RequestDeadlines::expire(std::int64_t now_ns) {
  std::vector<int> due;
  for (auto& [connection, entry] : connections_) {
    if (entry.cut || now_ns - entry.started_ns < limit_ns_) continue;
    entry.cut = true;
    due.push_back(entry.fd);
  }
  cut_total_ += due.size();
  return due;
}

}  // namespace skewscope
