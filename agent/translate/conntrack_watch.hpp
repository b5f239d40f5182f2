// The kernel's connection tracking of chosen network namespaces, read through ctnetlink: one
// netlink socket per namespace (opened inside it, so it reports that namespace's entries), a dump
// of the entries that exist at start, then the NEW and DESTROY events as they happen. Reading
// never blocks: drain() takes what is queued, the capture thread calls it before each batch of
// halves, and a connection's NEW event is queued before any of its data is sent (at its first
// packet), so its halves never reach the table first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skewscope/result.hpp"
#include "translate/conntrack_message.hpp"

namespace skewscope::translate {

// One watched namespace: its path ("self": the agent's own) and what its socket saw.
struct WatchedNamespace {
  std::string path;
  std::uint64_t datagrams = 0;
  std::uint64_t entries = 0;
  // ENOBUFS: the kernel dropped events because the socket's buffer was full. Each one triggers
  // a new dump, so only the mappings of connections that ended in between are missed.
  std::uint64_t overflows = 0;
  std::uint64_t dumps = 0;        // dumps requested (the first at start)
  std::uint64_t dump_errors = 0;  // dump requests the kernel refused, or that could not be sent
};

struct ConntrackWatchReport {
  std::vector<WatchedNamespace> namespaces;
  ConntrackRejects rejected{};
};

class ConntrackWatch {
 public:
  // Opens a socket in each namespace ("self", or a path such as /run/netns/NAME) and asks for a
  // dump; fails naming the namespace when one cannot be entered or its socket refuses the
  // conntrack groups (no CAP_NET_ADMIN, or no ctnetlink in this kernel).
  static Result<std::unique_ptr<ConntrackWatch>> open(const std::vector<std::string>& namespaces);
  ~ConntrackWatch();
  ConntrackWatch(const ConntrackWatch&) = delete;
  ConntrackWatch& operator=(const ConntrackWatch&) = delete;

  // Appends every entry queued on every socket now, without waiting.
  void drain(std::vector<ConntrackEntry>& entries);
  const ConntrackWatchReport& report() const { return report_; }

 private:
  ConntrackWatch() = default;
  void request_dump(std::size_t index);

  std::vector<int> fds_;  // one per namespace, in report_.namespaces' order
  std::vector<bool> dumping_;
  std::uint32_t next_seq_ = 1;
  std::vector<std::uint8_t> buffer_;
  ConntrackWatchReport report_;
};

}  // namespace skewscope::translate
