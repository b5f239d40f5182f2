// One copy for both ends of a local ZMTP direction: a receive whose bytes the kernel did not copy
// (its half flagged "payload mirrored": this agent copies the same bytes at their sender,
// bpf/lib/payload_mirror.bpf.h) gets its messages from the sender's parse. The sending stream
// keeps where each of its messages ends (a boundary, 8 bytes) until a mirrored call of its
// receiver has read that end; the receiver keeps its mirrored calls (ZmtpMirroredCalls) until the
// sender's parse has passed them. A message's receive half is stamped by the call that read its
// last byte, as a parsed receive's is. Pure: no clock, no I/O.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>

#include "skewscope/tcp_seq.hpp"

namespace skewscope {

// Where a sent message lies in its stream: [seq, seq + bytes).
struct ZmtpBoundary {
  std::uint32_t seq = 0;
  std::uint32_t bytes = 0;
  std::uint32_t end() const { return seq + bytes; }
};

// Where a sender's messages end, in stream order, until a mirrored call takes them: a run of
// consecutive messages of one size is one entry (a coalesced write of hundreds of equal messages
// is 16 bytes), so that a receiver whose calls lag by a socket buffer's worth of small messages
// costs a few thousand entries, not millions.
class ZmtpBoundaries {
 public:
  void push(std::uint32_t seq, std::uint32_t bytes) {
    if (!runs_.empty()) {
      Run& last = runs_.back();
      if (last.bytes == bytes && last.seq + last.bytes * last.count == seq && last.count < UINT32_MAX) {
        ++last.count;
        return;
      }
    }
    runs_.push_back({seq, bytes, 1});
  }
  bool empty() const { return runs_.empty(); }
  ZmtpBoundary front() const { return {runs_.front().seq, runs_.front().bytes}; }
  void pop_front(std::uint32_t n = 1) {
    Run& r = runs_.front();
    r.seq += r.bytes * n;
    if ((r.count -= n) == 0) runs_.pop_front();
  }
  // Of the front run's messages, those that end by `to` (at least the front, which the caller
  // checked): one size, consecutive.
  std::uint32_t front_ending_by(std::uint32_t to) const {
    const Run& r = runs_.front();
    if (r.bytes == 0) return r.count;
    const std::uint32_t span = to - r.seq;  // the front ends by `to`: below 2^31
    return std::max<std::uint32_t>(1, std::min(r.count, span / r.bytes));
  }
  // Drops the oldest run whole; returns its messages.
  std::uint32_t drop_front_run() {
    const std::uint32_t n = runs_.front().count;
    runs_.pop_front();
    return n;
  }
  std::size_t runs() const { return runs_.size(); }
  void clear() { runs_.clear(); }

 private:
  struct Run {
    std::uint32_t seq = 0;  // the first message's first byte
    std::uint32_t bytes = 0;
    std::uint32_t count = 0;
  };
  std::deque<Run> runs_;
};

// A receive call that was not copied: the bytes [seq, seq + bytes) it read, and its stamp.
struct ZmtpMirroredCall {
  std::uint32_t seq = 0;
  std::uint32_t bytes = 0;
  std::int64_t capture_ns = 0;
  std::uint32_t end() const { return seq + bytes; }
};

// A mirrored receiver's calls. Its halves come from the per-CPU half rings, so a call may arrive
// after a later one of the same socket (its thread moved CPU between them); the calls are kept in
// sequence order, and taken only contiguously: from where mirroring began (the kernel marks the
// first call it left uncopied) each call starts where the one before ended. Messages pair in
// stream order, so the first call also waits until the receiver's own parse of its copied calls
// (the payload ring, read apart from the half rings) has reached where mirroring began. A gap (a
// call not yet arrived, or lost with its half) waits until the call after it has waited
// kGapHoldNs; then the messages that ended in the gap are given up. The copied parse gets longer,
// kCopiedHoldNs: the payload ring is read apart from the half rings and, on a loaded host, falls
// behind them by more than kGapHoldNs, and giving up there pairs nothing right (the copied
// messages, parsed later, would be offered after mirrored ones that follow them in the stream).
// Only copied records that were lost (counted with the ring) leave it waiting the whole hold.
class ZmtpMirroredCalls {
 public:
  static constexpr std::int64_t kGapHoldNs = 50'000'000;
  static constexpr std::int64_t kCopiedHoldNs = 1'000'000'000;

  // `first`: the kernel's mark of the socket's first uncopied call. Returns false for a call that
  // overlaps one already kept or taken (a duplicate): not kept.
  bool add(const ZmtpMirroredCall& call, bool first) {
    if (first) start_ = call.seq;
    if (taken_to_ && seq_before(call.seq, *taken_to_)) return false;
    if (calls_.empty() || seq_before(calls_.back().seq, call.seq)) {
      calls_.push_back(call);
      return true;
    }
    auto at = std::lower_bound(calls_.begin(), calls_.end(), call.seq,
                               [](const ZmtpMirroredCall& c, std::uint32_t s) { return seq_before(c.seq, s); });
    if (at != calls_.end() && at->seq == call.seq) return false;
    calls_.insert(at, call);
    return true;
  }

  // Takes, in stream order, every message whose last byte a kept call read: emit(boundary, count,
  // call) for each run of them that one call read (`count` messages of boundary.bytes each, the
  // first at boundary.seq). A boundary that ends before the calls' stream position was read by a copied call
  // (before mirroring began) or by a call given up: dropped. A call is done once the sender's
  // parse has passed its end (`sender_parsed_to`: the sequence number after the sender's last
  // parsed byte; none while no sending stream is followed here): no message can end in it any
  // more. `copied_to`: the sequence number after the receiver's own last parsed (copied) byte; none
  // while its parse has had no byte (its copied records not read yet: a receiver's greeting is
  // always copied, so its parse is behind then, whatever a sequence number compares with).
  // `now_ns` (the newest capture time known) decides whether a gap has waited enough. Returns the
  // messages given up in gaps.
  template <class Emit>
  std::size_t resolve(ZmtpBoundaries& boundaries, std::optional<std::uint32_t> sender_parsed_to,
                      std::optional<std::uint32_t> copied_to, std::int64_t now_ns, Emit&& emit) {
    std::size_t given_up = 0;
    while (!calls_.empty()) {
      const ZmtpMirroredCall& call = calls_.front();
      const std::optional<std::uint32_t> at = taken_to_ ? taken_to_ : start_;
      // Before the first call: the copied calls' messages first.
      const bool copied_behind = !taken_to_ && start_ && (!copied_to || seq_before(*copied_to, *start_));
      if (!at || call.seq != *at || copied_behind) {
        // Where mirroring began is not known yet, a call before this one has not arrived, or the
        // receiver's copied calls are not all parsed yet.
        const std::int64_t hold = copied_behind ? kCopiedHoldNs : kGapHoldNs;
        if (now_ns - call.capture_ns < hold) break;
        taken_to_ = call.seq;  // waited enough: the calls before it are given up
      } else {
        taken_to_ = call.seq;
      }
      while (!boundaries.empty() && !seq_before(call.end(), boundaries.front().end())) {
        const ZmtpBoundary m = boundaries.front();
        if (seq_before(call.seq, m.end())) {
          const std::uint32_t n = boundaries.front_ending_by(call.end());
          emit(m, n, call);
          boundaries.pop_front(n);
          continue;
        }
        if (at && seq_before(*at, m.end())) ++given_up;  // it ended in a gap given up just now
        boundaries.pop_front();
      }
      const bool parsed_past = !boundaries.empty() || (sender_parsed_to && !seq_before(*sender_parsed_to, call.end()));
      if (!parsed_past) break;
      taken_to_ = call.end();
      calls_.pop_front();
    }
    return given_up;
  }

  // Calls captured before cutoff_ns: dropped (their messages' senders never came). Returns how many.
  std::size_t expire(std::int64_t cutoff_ns) {
    std::size_t n = 0;
    while (!calls_.empty() && calls_.front().capture_ns < cutoff_ns) {
      drop_oldest();
      ++n;
    }
    return n;
  }

  // Drops the oldest call (a bound reached). Returns whether there was one.
  bool drop_oldest() {
    if (calls_.empty()) return false;
    taken_to_ = calls_.front().end();
    calls_.pop_front();
    return true;
  }

  bool empty() const { return calls_.empty(); }
  std::size_t size() const { return calls_.size(); }

 private:
  std::deque<ZmtpMirroredCall> calls_;
  std::optional<std::uint32_t> start_;     // the first uncopied call's first byte
  std::optional<std::uint32_t> taken_to_;  // the byte after the last call taken (or given up)
};

}  // namespace skewscope
