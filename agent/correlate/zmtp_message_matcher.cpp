#include "correlate/zmtp_message_matcher.hpp"

#include <algorithm>

namespace skewscope {
namespace {

Span make_span(const ZmtpMessageEnd& send, const ZmtpMessageEnd& recv) {
  Span s;
  s.src = send.domain;
  s.dst = recv.domain;
  s.transport = Transport::zmtp;
  s.send_ns = send.time_ns;
  s.recv_ns = recv.time_ns;
  s.capture_ns = recv.age_ns;
  s.bytes = send.bytes;
  return s;
}

// Wrapping sequence order: a precedes b (less than half the number space behind it).
bool seq_before(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) < 0; }

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
  while (!other.empty() && seq_before(other.front().seq, seq)) {
    ++(send ? counters_.unpaired_recvs : counters_.unpaired_sends);
    other.pop_front();
    --pending_;
  }
  if (!other.empty()) {
    if (other.front().seq == seq) {
      out.push_back(send ? make_span(end, other.front().end) : make_span(other.front().end, end));
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
  const bool from_sends = recvs.empty() || (!sends.empty() && sends.front().end.age_ns <= recvs.front().end.age_ns);
  (from_sends ? sends : recvs).pop_front();
  --pending_;
  ++counters_.table_full;
  return true;
}

ZmtpMessageMatcher::FlowQueues& ZmtpMessageMatcher::queues_of(const FlowKey& flow) {
  if (last_queues_ == nullptr || !(last_flow_ == flow)) {
    last_queues_ = &flows_[flow];
    last_flow_ = flow;
  }
  return *last_queues_;
}

void ZmtpMessageMatcher::wait(std::deque<Waiting>& mine, std::uint32_t seq, const ZmtpMessageEnd& end) {
  if (mine.empty() || seq_before(mine.back().seq, seq)) {
    mine.push_back({seq, end});
    ++pending_;
    return;
  }
  // Out of stream order (not expected of one socket's calls): kept in order all the same.
  auto at = std::lower_bound(mine.begin(), mine.end(), seq,
                             [](const Waiting& w, std::uint32_t s) { return seq_before(w.seq, s); });
  if (at != mine.end() && at->seq == seq) {
    at->end = end;  // a second half of the same message replaces the first
    ++counters_.duplicates;
    return;
  }
  mine.insert(at, {seq, end});
  ++pending_;
}

void ZmtpMessageMatcher::expire(std::int64_t cutoff_ns) {
  last_queues_ = nullptr;  // its flow may be erased below
  largest_ = nullptr;
  largest_scanned_ = false;
  for (auto it = flows_.begin(); it != flows_.end();) {
    auto age = [&](std::deque<Waiting>& q, std::uint64_t& unpaired) {
      while (!q.empty() && q.front().end.age_ns < cutoff_ns) {
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
