#include "correlate/zmtp_message_matcher.hpp"

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

}  // namespace

bool ZmtpMessageMatcher::add(HalfKind kind, const FlowKey& flow, std::uint32_t seq, const ZmtpMessageEnd& end,
                             bool room, std::vector<Span>& out) {
  const bool send = kind == HalfKind::send;
  ++(send ? counters_.sends : counters_.recvs);
  const Key key{flow, seq};
  auto& other = send ? recvs_ : sends_;
  if (auto o = other.find(key); o != other.end()) {
    out.push_back(send ? make_span(end, o->second) : make_span(o->second, end));
    ++counters_.pairs;
    other.erase(o);
    return true;
  }
  if (!room) {
    ++counters_.table_full;
    return false;
  }
  auto& mine = send ? sends_ : recvs_;
  if (!mine.insert_or_assign(key, end).second) ++counters_.duplicates;
  return false;
}

void ZmtpMessageMatcher::expire(std::int64_t cutoff_ns) {
  auto age = [cutoff_ns](auto& table, std::uint64_t& unpaired) {
    for (auto it = table.begin(); it != table.end();) {
      if (it->second.age_ns < cutoff_ns) {
        ++unpaired;
        it = table.erase(it);
      } else {
        ++it;
      }
    }
  };
  age(sends_, counters_.unpaired_sends);
  age(recvs_, counters_.unpaired_recvs);
}

}  // namespace skewscope
