// One side (sends or receives) of a flow's waiting ZMTP message halves, in sequence order, for
// ZmtpMessageMatcher. The messages of one chunk share their end but for its size (same domain,
// stamp and clock reading): each half waits as its sequence number and size, 8 bytes, and the
// end once per run of consecutive halves that share it. At millions of messages a second tens of
// thousands of halves wait between two passes of the payload reader; at 40 bytes a half, the
// queue's front had left the caches by the time the other side's half came to pair with it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "skewscope/span.hpp"
#include "skewscope/tcp_seq.hpp"

namespace skewscope {

// One end of a message as the matcher keeps it.
struct ZmtpMessageEnd {
  DomainId domain = 0;
  std::int64_t age_ns = 0;   // the caller's clock for aging (capture or arrival time)
  std::int64_t time_ns = 0;  // the domain clock's wall-clock reading: the span's end
  std::uint32_t bytes = 0;   // the message's size on the wire
};

class ZmtpWaitingSide {
 public:
  bool empty() const { return halves_.empty(); }
  std::size_t size() const { return halves_.size(); }
  std::uint32_t front_seq() const { return halves_.front().seq; }
  std::uint32_t back_seq() const { return halves_.back().seq; }
  std::int64_t front_age_ns() const { return runs_.front().age_ns; }
  ZmtpMessageEnd front() const {
    const Run& r = runs_.front();
    return {r.domain, r.age_ns, r.time_ns, halves_.front().bytes};
  }

  void pop_front() {
    halves_.pop_front();
    if (--runs_.front().count == 0) runs_.pop_front();
  }
  // A half after every waiting one (the caller checks: seq_before(back_seq(), seq)).
  void push_back(std::uint32_t seq, const ZmtpMessageEnd& end) {
    halves_.push_back({seq, end.bytes});
    if (!runs_.empty() && runs_.back().shares(end)) {
      ++runs_.back().count;
    } else {
      runs_.push_back({end.domain, end.age_ns, end.time_ns, 1});
    }
  }
  // A half out of order (not expected of one socket's calls): put in its place, or in place of a
  // waiting half with the same sequence number (returns false then). Rebuilds the side: rare.
  bool insert_in_order(std::uint32_t seq, const ZmtpMessageEnd& end) {
    std::vector<std::pair<std::uint32_t, ZmtpMessageEnd>> all;
    all.reserve(halves_.size() + 1);
    while (!empty()) {
      all.emplace_back(front_seq(), front());
      pop_front();
    }
    auto at = std::lower_bound(all.begin(), all.end(), seq,
                               [](const auto& w, std::uint32_t s) { return seq_before(w.first, s); });
    const bool fresh = at == all.end() || at->first != seq;
    if (fresh) {
      all.insert(at, {seq, end});
    } else {
      at->second = end;
    }
    for (const auto& [s, e] : all) push_back(s, e);
    return fresh;
  }

 private:
  struct Half {
    std::uint32_t seq = 0;
    std::uint32_t bytes = 0;
  };
  struct Run {
    DomainId domain = 0;
    std::int64_t age_ns = 0;
    std::int64_t time_ns = 0;
    std::uint32_t count = 0;  // halves of this run still waiting
    bool shares(const ZmtpMessageEnd& e) const {
      return domain == e.domain && age_ns == e.age_ns && time_ns == e.time_ns && count < UINT32_MAX;
    }
  };
  std::deque<Half> halves_;
  std::deque<Run> runs_;  // in the halves' order; the front run's count ends at the front half's
};

}  // namespace skewscope
