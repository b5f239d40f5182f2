#include "correlate/correlator.hpp"

#include "skewscope/saturating.hpp"

namespace skewscope {

std::uint64_t Correlator::unwrap(FlowState& flow, std::uint32_t seq) {
  // Sequence numbers wrap at 2^32. Halves of one flow that are alive together are far less than
  // 2^31 bytes apart, so the signed distance to the last one seen places each on a 64-bit line.
  // The line starts high so that it never goes below zero.
  if (flow.last_seq == 0) {
    flow.last_seq = (std::uint64_t{1} << 40) + seq;
    return flow.last_seq;
  }
  auto delta = static_cast<std::int32_t>(seq - static_cast<std::uint32_t>(flow.last_seq));
  flow.last_seq += static_cast<std::int64_t>(delta);
  return flow.last_seq;
}

void Correlator::emit(const Half& send, const Half& recv, std::vector<Span>& out) {
  Span span;
  span.src = send.domain;
  span.dst = recv.domain;
  span.transport = send.transport;
  span.send_ns = send.domain_ns;
  span.recv_ns = recv.domain_ns;
  span.capture_ns = recv.capture_ns;
  span.bytes = send.bytes;
  out.push_back(span);
  ++counters_.pairs;
}

void Correlator::add(const Half& half, std::vector<Span>& out) {
  FlowState& flow = flows_[half.flow];
  std::uint64_t seq = unwrap(flow, half.seq);
  if (half.kind == HalfKind::send) {
    ++counters_.sends;
    add_send(flow, seq, half, out);
  } else {
    ++counters_.recvs;
    add_recv(flow, seq, half, out);
  }
}

void Correlator::add_send(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out) {
  // The receive holding this first byte, if it came first: the last one starting at or before it.
  auto it = flow.recvs.upper_bound(seq);
  if (it != flow.recvs.begin()) {
    --it;
    if (seq < it->second.end) {
      emit(half, it->second.half, out);
      it->second.started_a_send = true;
      return;
    }
  }
  auto existing = flow.sends.find(seq);
  if (existing != flow.sends.end()) {
    ++counters_.duplicate_sends;
    existing->second = half;
    return;
  }
  if (table_full()) {
    ++counters_.dropped_table_full;
    return;
  }
  flow.sends.emplace(seq, half);
  ++pending_sends_;
}

void Correlator::add_recv(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out) {
  const std::uint64_t end = seq + half.bytes;
  bool started_a_send = false;
  for (auto it = flow.sends.lower_bound(seq); it != flow.sends.end() && it->first < end;) {
    emit(it->second, half, out);
    started_a_send = true;
    it = flow.sends.erase(it);
    --pending_sends_;
  }
  // Kept a while even when it completed sends: a send starting later in its bytes may be late.
  if (table_full()) {
    ++counters_.dropped_table_full;
    return;
  }
  auto [it, inserted] = flow.recvs.try_emplace(seq, PendingRecv{half, end, started_a_send});
  if (inserted) {
    ++pending_recvs_;
  } else if (end > it->second.end) {
    it->second = PendingRecv{half, end, started_a_send || it->second.started_a_send};
  }
}

void Correlator::expire(std::int64_t now_ns) {
  // Within a flow, sequence order is time order, so each table ages from its front and the scan
  // stops at the first young entry. A slightly reordered older entry behind it goes on a later
  // pass: it waits at most as long as the reordering, and memory stays bounded by max_pending.
  for (auto flow_it = flows_.begin(); flow_it != flows_.end();) {
    FlowState& flow = flow_it->second;
    while (!flow.sends.empty() && sat_sub(now_ns, flow.sends.begin()->second.capture_ns) > limits_.send_max_age_ns) {
      ++counters_.sends_expired;
      --pending_sends_;
      flow.sends.erase(flow.sends.begin());
    }
    while (!flow.recvs.empty() && sat_sub(now_ns, flow.recvs.begin()->second.half.capture_ns) > limits_.recv_max_age_ns) {
      if (!flow.recvs.begin()->second.started_a_send) ++counters_.recvs_without_start;
      --pending_recvs_;
      flow.recvs.erase(flow.recvs.begin());
    }
    if (flow.sends.empty() && flow.recvs.empty()) {
      flow_it = flows_.erase(flow_it);
    } else {
      ++flow_it;
    }
  }
}

}  // namespace skewscope
