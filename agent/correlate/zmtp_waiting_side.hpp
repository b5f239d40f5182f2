// One side (sends or receives) of a flow's waiting ZMTP message halves, in sequence order, for
// ZmtpMessageMatcher. The messages of one chunk share their end but for its size (same domain,
// stamp and clock reading), and a coalesced write's are mostly of one size: the halves wait as
// runs of consecutive halves of one size (12 bytes a run) and, beside them, runs of halves that
// share an end. At millions of messages a second tens of thousands of halves wait between two
// passes of the payload reader; at 40 bytes a half, the queue's front had left the caches by the
// time the other side's half came to pair with it, and at 8 bytes a half the matcher still
// touched every one: a run of equal halves pairs with the other side's run in one step
// (ZmtpMessageMatcher::add_run).
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
  bool empty() const { return sizes_.empty(); }
  std::size_t size() const { return size_; }
  std::uint32_t front_seq() const { return sizes_.front().seq; }
  std::uint32_t back_seq() const {
    const SizeRun& r = sizes_.back();
    return r.seq + r.bytes * (r.count - 1);
  }
  std::int64_t front_age_ns() const { return ends_.front().age_ns; }
  ZmtpMessageEnd front() const {
    const EndRun& e = ends_.front();
    return {e.domain, e.age_ns, e.time_ns, sizes_.front().bytes};
  }
  // The halves from the front on that share the front's size and end (consecutive: the first at
  // front_seq(), each front_bytes() after the one before): they pair alike.
  std::uint32_t front_run_halves() const { return std::min(sizes_.front().count, ends_.front().count); }
  std::uint32_t front_bytes() const { return sizes_.front().bytes; }

  void pop_front() { pop_front(1); }
  // The n oldest halves (n ≤ front_run_halves()).
  void pop_front(std::uint32_t n) {
    SizeRun& r = sizes_.front();
    r.seq += r.bytes * n;
    r.count -= n;
    if (r.count == 0) sizes_.pop_front();
    if ((ends_.front().count -= n) == 0) ends_.pop_front();
    size_ -= n;
  }
  // `count` consecutive halves of end.bytes each from seq, after every waiting one (the caller
  // checks: seq_before(back_seq(), seq)).
  void push_back(std::uint32_t seq, const ZmtpMessageEnd& end, std::uint32_t count = 1) {
    size_ += count;
    if (!sizes_.empty() && sizes_.back().continued_by(seq, end.bytes, count)) {
      sizes_.back().count += count;
    } else {
      sizes_.push_back({seq, end.bytes, count});
    }
    if (!ends_.empty() && ends_.back().shares(end, count)) {
      ends_.back().count += count;
    } else {
      ends_.push_back({end.domain, end.age_ns, end.time_ns, count});
    }
  }
  // A half out of order (not expected of one socket's calls): put in its place, or in place of a
  // waiting half with the same sequence number (returns false then). Rebuilds the side: rare.
  bool insert_in_order(std::uint32_t seq, const ZmtpMessageEnd& end) {
    std::vector<std::pair<std::uint32_t, ZmtpMessageEnd>> all;
    all.reserve(size_ + 1);
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
  // Halves at seq, seq + bytes, ..., each `bytes` long.
  struct SizeRun {
    std::uint32_t seq = 0;
    std::uint32_t bytes = 0;
    std::uint32_t count = 0;  // halves of this run still waiting
    bool continued_by(std::uint32_t next_seq, std::uint32_t next_bytes, std::uint32_t n) const {
      return bytes == next_bytes && seq + bytes * count == next_seq && count <= UINT32_MAX - n;
    }
  };
  // Consecutive halves that share their end (a chunk's messages, whatever their sizes).
  struct EndRun {
    DomainId domain = 0;
    std::int64_t age_ns = 0;
    std::int64_t time_ns = 0;
    std::uint32_t count = 0;
    bool shares(const ZmtpMessageEnd& e, std::uint32_t n) const {
      return domain == e.domain && age_ns == e.age_ns && time_ns == e.time_ns && count <= UINT32_MAX - n;
    }
  };
  std::deque<SizeRun> sizes_;  // the halves in order, as runs of one size
  std::deque<EndRun> ends_;    // the same halves, as runs of one end
  std::size_t size_ = 0;
};

}  // namespace skewscope
