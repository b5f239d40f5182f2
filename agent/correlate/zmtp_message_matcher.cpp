#include "correlate/zmtp_message_matcher.hpp"

#include <algorithm>

namespace skewscope {
namespace {

// Written in place, field by field: a span built on the stack and then copied was stored in
// small pieces and read back in 16-byte ones, a store-forwarding stall on every message.
void append_span(std::vector<Span>& out, const ZmtpMessageEnd& send, const ZmtpMessageEnd& recv,
                 std::uint32_t messages = 1) {
  Span& s = out.emplace_back();
  s.src = send.domain;
  s.dst = recv.domain;
  s.transport = Transport::zmtp;
  s.send_ns = send.time_ns;
  s.recv_ns = recv.time_ns;
  s.capture_ns = recv.age_ns;
  s.bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{send.bytes} * messages, UINT32_MAX));
  s.messages = messages;
}

// Of `count` messages of `bytes` each from seq, those that start before `limit`.
std::uint32_t starting_before(std::uint32_t seq, std::uint32_t bytes, std::uint32_t count, std::uint32_t limit) {
  if (!seq_before(seq, limit)) return 0;
  if (bytes == 0) return count;
  const std::uint32_t gap = limit - seq;  // below 2^31: seq_before
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(count, (std::uint64_t{gap} + bytes - 1) / bytes));
}

}  // namespace

bool ZmtpMessageMatcher::add(HalfKind kind, const FlowKey& flow, std::uint32_t seq, const ZmtpMessageEnd& end,
                             bool room, std::vector<Span>& out) {
  const bool send = kind == HalfKind::send;
  ++(send ? counters_.sends : counters_.recvs);
  FlowQueues& queues = queues_of(flow);
  auto& mine = send ? queues.sends : queues.recvs;
  auto& other = send ? queues.recvs : queues.sends;
  // The other side's halves before this message: their own other halves would have come before
  // this one, and did not.
  while (!other.empty() && seq_before(other.front_seq(), seq)) {
    ++(send ? counters_.unpaired_recvs : counters_.unpaired_sends);
    other.pop_front();
    --pending_;
  }
  if (!other.empty()) {
    if (other.front_seq() == seq) {
      if (send) {
        append_span(out, end, other.front());
      } else {
        append_span(out, other.front(), end);
      }
      ++counters_.pairs;
      other.pop_front();
      --pending_;
      return true;
    }
    // The other side is already past this message: its other half was lost.
    ++(send ? counters_.unpaired_sends : counters_.unpaired_recvs);
    return false;
  }
  if (!room && !crowd_out_largest(queues)) {
    ++counters_.table_full;
    return false;
  }
  wait(mine, seq, end);
  return false;
}

std::size_t ZmtpMessageMatcher::add_run(HalfKind kind, const FlowKey& flow, std::uint32_t seq, std::uint32_t count,
                                        const ZmtpMessageEnd& end, std::size_t room, std::vector<Span>& out) {
  const bool send = kind == HalfKind::send;
  (send ? counters_.sends : counters_.recvs) += count;
  FlowQueues& queues = queues_of(flow);
  auto& mine = send ? queues.sends : queues.recvs;
  auto& other = send ? queues.recvs : queues.sends;
  const std::uint32_t bytes = end.bytes;
  std::size_t spans = 0;
  // Each step takes the longest prefix of the run that one add() per message would treat alike.
  while (count > 0) {
    // Room is judged as add()'s callers judge it: before the message's step drops any half.
    const bool room_before = pending_ < room;
    // The other side's halves before this message: their own other halves would have come before
    // it, and did not.
    while (!other.empty() && seq_before(other.front_seq(), seq)) {
      const std::uint32_t n = std::max<std::uint32_t>(
          1, starting_before(other.front_seq(), other.front_bytes(), other.front_run_halves(), seq));
      (send ? counters_.unpaired_recvs : counters_.unpaired_sends) += n;
      other.pop_front(n);
      pending_ -= n;
    }
    if (!other.empty()) {
      if (other.front_seq() == seq) {
        const std::uint32_t n = other.front_bytes() == bytes ? std::min(count, other.front_run_halves()) : 1;
        if (send) {
          append_span(out, end, other.front(), n);
        } else {
          append_span(out, other.front(), end, n);
        }
        ++spans;
        counters_.pairs += n;
        other.pop_front(n);
        pending_ -= n;
        seq += bytes * n;
        count -= n;
        continue;
      }
      // The other side is already past these messages: their other halves were lost.
      const std::uint32_t n = std::max<std::uint32_t>(1, starting_before(seq, bytes, count, other.front_seq()));
      (send ? counters_.unpaired_sends : counters_.unpaired_recvs) += n;
      seq += bytes * n;
      count -= n;
      continue;
    }
    // Nothing of the other side waits: the run waits, as far as there is room (for the messages
    // after this one, with the ones before them waiting).
    if (room_before && (mine.empty() || seq_before(mine.back_seq(), seq))) {
      const std::size_t more = room > pending_ + 1 ? room - pending_ - 1 : 0;
      const auto n = static_cast<std::uint32_t>(1 + std::min<std::size_t>(count - 1, more));
      mine.push_back(seq, end, n);
      pending_ += n;
      seq += bytes * n;
      count -= n;
      continue;
    }
    if (room_before || crowd_out_largest(queues)) {
      wait(mine, seq, end);
    } else {
      ++counters_.table_full;
    }
    seq += bytes;
    --count;
  }
  return spans;
}

bool ZmtpMessageMatcher::crowd_out_largest(const FlowQueues& mine) {
  auto waiting = [](const FlowQueues& q) { return q.sends.size() + q.recvs.size(); };
  const std::size_t needed = waiting(mine) + 1;  // more than this flow would wait with the half
  if (largest_ == nullptr || waiting(*largest_) <= needed) {
    if (largest_scanned_) return false;
    largest_scanned_ = true;
    largest_ = nullptr;
    for (auto& [flow, q] : flows_)
      if (largest_ == nullptr || waiting(q) > waiting(*largest_)) largest_ = &q;
    if (largest_ == nullptr || waiting(*largest_) <= needed) return false;
  }
  largest_scanned_ = false;  // a new scan is allowed once this flow is no longer the largest
  // Its older front: the half that waited longest, and the least likely to pair.
  auto& sends = largest_->sends;
  auto& recvs = largest_->recvs;
  const bool from_sends = recvs.empty() || (!sends.empty() && sends.front_age_ns() <= recvs.front_age_ns());
  (from_sends ? sends : recvs).pop_front();
  --pending_;
  ++counters_.table_full;
  return true;
}

ZmtpMessageMatcher::FlowQueues& ZmtpMessageMatcher::queues_of(const FlowKey& flow) {
  if (recent_[0].queues && recent_[0].flow == flow) return *recent_[0].queues;
  if (recent_[1].queues && recent_[1].flow == flow) {
    std::swap(recent_[0], recent_[1]);
    return *recent_[0].queues;
  }
  recent_[1] = recent_[0];
  recent_[0] = {flow, &flows_[flow]};
  return *recent_[0].queues;
}

void ZmtpMessageMatcher::wait(ZmtpWaitingSide& mine, std::uint32_t seq, const ZmtpMessageEnd& end) {
  if (mine.empty() || seq_before(mine.back_seq(), seq)) {
    mine.push_back(seq, end);
    ++pending_;
    return;
  }
  // Out of stream order (not expected of one socket's calls): kept in order all the same; a
  // second half of the same message replaces the first.
  if (mine.insert_in_order(seq, end)) {
    ++pending_;
  } else {
    ++counters_.duplicates;
  }
}

void ZmtpMessageMatcher::expire(std::int64_t cutoff_ns) {
  recent_ = {};  // their flows may be erased below
  largest_ = nullptr;
  largest_scanned_ = false;
  for (auto it = flows_.begin(); it != flows_.end();) {
    auto age = [&](ZmtpWaitingSide& q, std::uint64_t& unpaired) {
      while (!q.empty() && q.front_age_ns() < cutoff_ns) {
        ++unpaired;
        q.pop_front();
        --pending_;
      }
    };
    age(it->second.sends, counters_.unpaired_sends);
    age(it->second.recvs, counters_.unpaired_recvs);
    it = it->second.sends.empty() && it->second.recvs.empty() ? flows_.erase(it) : std::next(it);
  }
}

}  // namespace skewscope
