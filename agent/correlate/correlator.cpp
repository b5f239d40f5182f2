#include "correlate/correlator.hpp"

#include <algorithm>
#include <cstring>

#include "skewscope/saturating.hpp"
#include "skewscope/tcp_seq.hpp"

namespace skewscope {

// ---- per-flow sorted queues -------------------------------------------------------------------

template <class T>
T* Correlator::SeqQueue<T>::lower_bound(std::uint64_t seq) {
  // Fast path: a half newer than everything waiting (the usual case) goes to the back.
  if (empty() || items.back().seq < seq) return end();
  return std::lower_bound(begin(), end(), seq, [](const T& entry, std::uint64_t s) { return entry.seq < s; });
}

template <class T>
T* Correlator::SeqQueue<T>::insert(T* pos, const T& value) {
  const auto offset = static_cast<std::size_t>(pos - items.data());
  if (offset == items.size()) {
    items.push_back(value);
    return &items.back();
  }
  if (offset == head && head > 0) {  // before everything: reuse the consumed slot in front
    items[--head] = value;
    return &items[head];
  }
  return &*items.insert(items.begin() + static_cast<std::ptrdiff_t>(offset), value);
}

template <class T>
void Correlator::SeqQueue<T>::erase(T* first, T* last) {
  if (first == last) return;
  if (first == begin()) {
    head += static_cast<std::size_t>(last - first);
    if (head == items.size()) {
      items.clear();
      head = 0;
      // A burst on one flow must not pin its memory for the flow's lifetime.
      if (items.capacity() > 1024) items.shrink_to_fit();
    } else if (head >= 64 && head * 2 >= items.size()) {
      items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    return;
  }
  const auto from = static_cast<std::ptrdiff_t>(first - items.data());
  items.erase(items.begin() + from, items.begin() + from + (last - first));
}

// ---- flow table -------------------------------------------------------------------------------

std::uint64_t Correlator::hash_key(const FlowKey& key) {
  // By 64-bit words: the 36-byte key in five multiplies instead of 36 byte-wise FNV rounds.
  std::uint64_t w[4];
  std::memcpy(&w[0], key.src_addr.data(), 16);
  std::memcpy(&w[2], key.dst_addr.data(), 16);
  std::uint64_t h = 0x243F6A8885A308D3ull ^ (std::uint64_t{key.src_port} << 16 | key.dst_port);
  for (std::uint64_t word : w) {
    h = (h ^ word) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

void Correlator::rehash(std::size_t slots) {
  slots_.assign(slots, Slot{});
  const std::size_t mask = slots - 1;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    std::size_t at = flows_[i].hash & mask;
    while (slots_[at].position != 0) at = (at + 1) & mask;
    slots_[at] = Slot{static_cast<std::uint32_t>(flows_[i].hash), static_cast<std::uint32_t>(i + 1)};
  }
}

Correlator::FlowState& Correlator::flow_of(const FlowKey& key) {
  for (std::size_t i = 0; i < recent_flows_.size(); ++i) {
    const std::size_t at = recent_flows_[i];
    if (at < flows_.size() && flows_[at].key == key) {
      if (i) std::swap(recent_flows_[0], recent_flows_[i]);
      return flows_[at].state;
    }
  }
  if (slots_.empty()) rehash(64);
  const std::uint64_t h = hash_key(key);
  const auto h32 = static_cast<std::uint32_t>(h);
  std::size_t mask = slots_.size() - 1;
  std::size_t at = h & mask;
  for (; slots_[at].position != 0; at = (at + 1) & mask) {
    const Slot& s = slots_[at];
    if (s.hash == h32 && flows_[s.position - 1].key == key) {
      remember_flow(s.position - 1);
      return flows_[s.position - 1].state;
    }
  }
  if ((flows_.size() + 1) * 2 > slots_.size()) {  // load factor at most 1/2: probes stay short
    rehash(slots_.size() * 2);
    mask = slots_.size() - 1;
    for (at = h & mask; slots_[at].position != 0;) at = (at + 1) & mask;
  }
  flows_.push_back(Flow{key, h, FlowState{}});
  slots_[at] = Slot{h32, static_cast<std::uint32_t>(flows_.size())};
  remember_flow(flows_.size() - 1);
  return flows_.back().state;
}

void Correlator::remember_flow(std::size_t index) {
  recent_flows_[1] = recent_flows_[0];
  recent_flows_[0] = index;
}

void Correlator::take_flow(const FlowKey& key, std::vector<Half>& out) {
  if (slots_.empty()) return;
  const std::uint64_t h = hash_key(key);
  const std::size_t mask = slots_.size() - 1;
  std::size_t at = h & mask;
  for (; slots_[at].position != 0; at = (at + 1) & mask)
    if (slots_[at].hash == static_cast<std::uint32_t>(h) && flows_[slots_[at].position - 1].key == key) break;
  if (slots_[at].position == 0) return;
  const std::size_t index = slots_[at].position - 1;
  FlowState& flow = flows_[index].state;
  for (const PendingSend* s = flow.sends.begin(); s != flow.sends.end(); ++s) {
    out.push_back(Half{HalfKind::send, s->transport, key, static_cast<std::uint32_t>(s->seq), s->bytes, s->capture_ns,
                       s->domain_ns, s->domain});
    --pending_sends_;
  }
  for (const PendingRecv* r = flow.recvs.begin(); r != flow.recvs.end(); ++r) {
    out.push_back(Half{HalfKind::recv, Transport::tcp, key, static_cast<std::uint32_t>(r->seq),
                       static_cast<std::uint32_t>(r->end - r->seq), r->capture_ns, r->domain_ns, r->domain});
    --pending_recvs_;
  }
  erase_flow(index);
}

void Correlator::erase_flow(std::size_t index) {
  recent_flows_ = {SIZE_MAX, SIZE_MAX};  // the last flow moves into the hole
  const std::size_t mask = slots_.size() - 1;
  auto slot_of = [&](std::size_t flow_index) {
    std::size_t at = flows_[flow_index].hash & mask;
    while (slots_[at].position != flow_index + 1) at = (at + 1) & mask;
    return at;
  };
  // Backward-shift deletion: entries after the hole move into it unless their home slot lies
  // cyclically within (hole, their slot], so every probe sequence stays unbroken.
  std::size_t hole = slot_of(index);
  for (std::size_t j = (hole + 1) & mask; slots_[j].position != 0; j = (j + 1) & mask) {
    const std::size_t home = slots_[j].hash & mask;
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!stays) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{};
  const std::size_t last = flows_.size() - 1;
  if (index != last) {
    slots_[slot_of(last)].position = static_cast<std::uint32_t>(index + 1);
    flows_[index] = std::move(flows_[last]);
  }
  flows_.pop_back();
}

// ---- pairing ----------------------------------------------------------------------------------

std::uint64_t Correlator::unwrap(FlowState& flow, std::uint32_t seq) {
  // Sequence numbers wrap at 2^32. Halves of one flow that are alive together are far less than
  // 2^31 bytes apart, so the signed distance to the last one seen places each on a 64-bit line.
  // The line starts high so that it never goes below zero.
  if (flow.last_seq == 0) {
    flow.last_seq = (std::uint64_t{1} << 40) + seq;
    return flow.last_seq;
  }
  const std::int32_t delta = seq_diff(seq, static_cast<std::uint32_t>(flow.last_seq));
  flow.last_seq += static_cast<std::int64_t>(delta);
  return flow.last_seq;
}

void Correlator::emit(const PendingSend& send, const PendingRecv& recv, std::vector<Span>& out) {
  // Filled where it ends up: a Span built on the stack and then pushed was copied by wide loads
  // of its narrow fields just stored (stalled store forwarding, the correlator's top cost).
  Span& span = out.emplace_back();
  span.src = send.domain;
  span.dst = recv.domain;
  span.transport = send.transport;
  span.send_ns = send.domain_ns;
  span.recv_ns = recv.domain_ns;
  span.capture_ns = recv.capture_ns;
  span.bytes = send.bytes;
  ++counters_.pairs;
}

void Correlator::add(const Half& half, std::vector<Span>& out) {
  FlowState& flow = flow_of(half.flow);
  std::uint64_t seq = unwrap(flow, half.seq);
  if (half.kind == HalfKind::send) {
    ++counters_.sends;
    add_send(flow, seq, half, out);
  } else {
    ++counters_.recvs;
    add_recv(flow, seq, half, out);
  }
}

// Sends do not overlap (each has its own bytes), so once the sends seen cover a byte range no
// other send can start inside it: a receive within that range has nothing left to wait for.
void Correlator::note_send(FlowState& f, std::uint64_t seq, std::uint64_t end, std::int64_t capture_ns) {
  if (f.furthest_send_end == 0) {
    f.covered_from = seq;
    f.covered_to = f.furthest_send_end = end;
    return;
  }
  f.furthest_send_end = std::max(f.furthest_send_end, end);
  if (seq <= f.covered_to && end >= f.covered_from) {
    f.covered_from = std::min(f.covered_from, seq);
    f.covered_to = std::max(f.covered_to, end);
  } else if (seq > f.covered_to) {
    if (f.island_to != 0 && seq <= f.island_to && end >= f.island_from) {
      f.island_from = std::min(f.island_from, seq);
      f.island_to = std::max(f.island_to, end);
    } else if (f.island_to == 0 || seq < f.island_from) {
      f.island_from = seq;  // the nearer island is the one a late send will join first
      f.island_to = end;
    }  // a farther island is not tracked: that gap closes by time
    if (f.gap_since_ns == 0) f.gap_since_ns = capture_ns;
  }  // a send entirely before the covered range (older than the first one seen): not tracked
  if (f.island_to != 0 && f.covered_to >= f.island_from) {
    f.covered_to = std::max(f.covered_to, f.island_to);
    f.island_from = f.island_to = 0;
    if (f.covered_to < f.furthest_send_end) f.gap_since_ns = capture_ns;  // another gap remains
  }
  if (f.covered_to >= f.furthest_send_end) f.gap_since_ns = 0;
}

void Correlator::release_range(FlowState& f, std::uint64_t from, std::uint64_t to, const Orphans* orphans) {
  PendingRecv* first = f.recvs.lower_bound(from);
  PendingRecv* last = first;
  for (; last != f.recvs.end() && last->end <= to; ++last) {
    if (last->started_a_send) continue;
    ++counters_.recvs_without_start;
    if (!orphans) continue;
    ++counters_.recvs_orphaned;
    if (orphans->out) orphans->out->push_back({HalfKind::recv, last->domain, orphans->flow.src_addr});
  }
  pending_recvs_ -= static_cast<std::size_t>(last - first);
  f.recvs.erase(first, last);
}

void Correlator::release_covered(FlowState& f, const Orphans* orphans) {
  if (f.recvs.empty()) return;
  if (f.island_to != 0) release_range(f, f.island_from, f.island_to, orphans);
  release_range(f, f.covered_from, f.covered_to, orphans);
}

bool Correlator::covered(const FlowState& f, std::uint64_t seq, std::uint64_t end) {
  if (f.furthest_send_end == 0) return false;
  return (seq >= f.covered_from && end <= f.covered_to) ||
         (f.island_to != 0 && seq >= f.island_from && end <= f.island_to);
}

void Correlator::add_send(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out) {
  const PendingSend send{seq, half.capture_ns, half.domain_ns, half.bytes, half.domain, half.transport};
  note_send(flow, seq, seq + half.bytes, half.capture_ns);
  // The receive holding this first byte, if it came first: the last one starting at or before it.
  PendingRecv* recv = flow.recvs.lower_bound(seq + 1);
  if (recv != flow.recvs.begin()) {
    --recv;
    if (seq < recv->end) {
      emit(send, *recv, out);
      recv->started_a_send = true;
      release_covered(flow);
      return;
    }
  }
  release_covered(flow);
  PendingSend* at = flow.sends.lower_bound(seq);
  if (at != flow.sends.end() && at->seq == seq) {
    ++counters_.duplicate_sends;
    *at = send;
    return;
  }
  if (table_full()) {
    ++counters_.dropped_table_full;
    return;
  }
  flow.sends.insert(at, send);
  ++pending_sends_;
}

void Correlator::add_recv(FlowState& flow, std::uint64_t seq, const Half& half, std::vector<Span>& out) {
  PendingRecv recv{seq, seq + half.bytes, half.capture_ns, half.domain_ns, half.domain, false};
  PendingSend* first = flow.sends.lower_bound(seq);
  PendingSend* last = first;
  for (; last != flow.sends.end() && last->seq < recv.end; ++last) emit(*last, recv, out);
  recv.started_a_send = last != first;
  pending_sends_ -= static_cast<std::size_t>(last - first);
  flow.sends.erase(first, last);
  // Kept only while a send starting later in its bytes may still be on its way.
  if (covered(flow, seq, recv.end)) {
    if (!recv.started_a_send) ++counters_.recvs_without_start;
    return;
  }
  if (table_full()) {
    ++counters_.dropped_table_full;
    return;
  }
  PendingRecv* at = flow.recvs.lower_bound(seq);
  if (at == flow.recvs.end() || at->seq != seq) {
    flow.recvs.insert(at, recv);
    ++pending_recvs_;
  } else if (recv.end > at->end) {
    recv.started_a_send = recv.started_a_send || at->started_a_send;
    *at = recv;
  }
}

void Correlator::expire(std::int64_t now_ns, std::vector<UnpairedHalf>* unpaired) {
  // Within a flow, sequence order is time order, so each table ages from its front and the scan
  // stops at the first young entry. A slightly reordered older entry behind it goes on a later
  // pass: it waits at most as long as the reordering, and memory stays bounded by max_pending.
  for (std::size_t i = 0; i < flows_.size();) {
    FlowState& flow = flows_[i].state;
    const FlowKey& key = flows_[i].key;
    while (!flow.sends.empty() && sat_sub(now_ns, flow.sends.begin()->capture_ns) > limits_.send_max_age_ns) {
      ++counters_.sends_expired;
      if (unpaired) unpaired->push_back({HalfKind::send, flow.sends.begin()->domain, key.dst_addr});
      --pending_sends_;
      flow.sends.pop_front();
    }
    if (flow.gap_since_ns != 0 && sat_sub(now_ns, flow.gap_since_ns) > limits_.recv_max_age_ns) {
      // A send missing for longer than the allowance is not coming (lost, or not traced).
      flow.covered_to = flow.furthest_send_end;
      flow.island_from = flow.island_to = 0;
      flow.gap_since_ns = 0;
      const Orphans orphans{key, unpaired};
      release_covered(flow, &orphans);
    }
    // A receive that ages out held bytes no send seen covers (else it would have been released).
    while (!flow.recvs.empty() && sat_sub(now_ns, flow.recvs.begin()->capture_ns) > limits_.recv_max_age_ns) {
      if (!flow.recvs.begin()->started_a_send) {
        ++counters_.recvs_without_start;
        ++counters_.recvs_orphaned;
        if (unpaired) unpaired->push_back({HalfKind::recv, flow.recvs.begin()->domain, key.src_addr});
      }
      --pending_recvs_;
      flow.recvs.pop_front();
    }
    if (flow.sends.empty() && flow.recvs.empty()) {
      erase_flow(i);  // moves the last flow into i: look at i again
    } else {
      ++i;
    }
  }
}

}  // namespace skewscope
