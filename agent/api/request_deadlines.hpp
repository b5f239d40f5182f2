// Whole-request deadlines for the HTTP server.
//
// libmicrohttpd's own connection timeout is an idle timeout: it restarts on every byte, so a
// client that trickles a header byte per second (or reads the response a byte per second) holds
// its connection for ever. The server has no option for a whole-request limit, so the agent keeps
// one here: a connection's clock starts when it is accepted and restarts when a response has been
// completely sent; a connection still unanswered after the limit is cut. Keep-alive gaps between
// requests count too, which only shortens what the idle timeout would allow anyway.
//
// Pure bookkeeping, no I/O: the server calls it from its one event-loop thread and shuts down the
// sockets it returns (shutdown, not close: the server still owns the descriptor and closes it
// itself when it sees the end of the stream, so a descriptor number is never reused under it).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace skewscope {

class RequestDeadlines {
 public:
  explicit RequestDeadlines(std::int64_t limit_ns) : limit_ns_(limit_ns) {}

  void opened(std::uintptr_t connection, int fd, std::int64_t now_ns);
  void completed(std::uintptr_t connection, std::int64_t now_ns);  // a response was fully sent
  void closed(std::uintptr_t connection);
  // Descriptors of connections past their deadline, each returned once.
  std::vector<int> expire(std::int64_t now_ns);

  std::size_t open_connections() const { return connections_.size(); }
  std::uint64_t cut_total() const { return cut_total_; }

 private:
  struct Entry {
    int fd;
    std::int64_t started_ns;
    bool cut;
  };
  std::int64_t limit_ns_;
  std::unordered_map<std::uintptr_t, Entry> connections_;
  std::uint64_t cut_total_ = 0;
};

}  // namespace skewscope
