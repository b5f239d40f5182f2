#include "correlate/kafka_batch_matcher.hpp"

#include <algorithm>

namespace skewscope {

namespace kafka = protocols::kafka;

KafkaBatchMatcher::Key KafkaBatchMatcher::key_of(const kafka::PairingKey& k) {
  return {static_cast<int>(k.kind), k.topic, k.partition, k.a, k.b, k.c};
}

void KafkaBatchMatcher::emit(Produced& p, const KafkaBatchEnd& fetched, const KafkaConsumerId& consumer,
                             std::vector<Span>& out, std::vector<MessageSpanInfo>& info) {
  p.consumers.push_back(consumer);
  Span s;
  s.src = p.end.domain;
  s.dst = fetched.domain;
  s.transport = Transport::kafka;
  s.send_ns = p.end.time_ns;
  s.recv_ns = fetched.time_ns;
  s.capture_ns = fetched.age_ns;
  s.bytes = p.end.bytes;
  out.push_back(s);
  info.push_back(p.info);
  info.back().consumer_socket = consumer.socket;
  ++counters_.pairs;
  counters_.paired_records += static_cast<std::uint64_t>(std::max(p.info.records, 0));
}

// A fetched batch meets its produced half by the primary key, else by the base offset.
KafkaBatchMatcher::Produced* KafkaBatchMatcher::find(const std::optional<Key>& primary,
                                                     const std::optional<Key>& offset) {
  if (primary)
    if (auto it = produced_.find(*primary); it != produced_.end()) return &it->second;
  if (offset)
    if (auto it = produced_by_offset_.find(*offset); it != produced_by_offset_.end())
      if (auto p = produced_.find(it->second); p != produced_.end()) return &p->second;
  return nullptr;
}

void KafkaBatchMatcher::produced(const kafka::BatchHalf& b, const KafkaBatchEnd& end, bool room, std::vector<Span>& out,
                                 std::vector<MessageSpanInfo>& info) {
  ++counters_.produced;
  auto primary = kafka::primary_key(b);
  auto offset = kafka::offset_key(b);
  if (!primary && !offset) {
    ++counters_.unkeyed;
    return;
  }
  const Key key = key_of(primary ? *primary : *offset);
  if (!room) {
    ++counters_.table_full;
    return;
  }
  Produced p;
  p.end = end;
  p.info = {b.topic, b.partition, b.record_count};
  if (offset) p.offset_key = key_of(*offset);
  // A batch is produced once. A second Produce of it (a retry, or a forwarder relaying the same
  // request) keeps the earliest send: a Produce is decoded only when its response arrives, so the
  // hop nearest the broker is often decoded first. Earliest is judged on one domain's clock only
  // (sends in other domains are not comparable), and only while no consumer has paired with it.
  auto [it, inserted] = produced_.try_emplace(key, std::move(p));
  if (!inserted) {
    ++counters_.duplicates;
    Produced& kept = it->second;
    if (kept.consumers.empty() && kept.end.domain == end.domain && end.time_ns < kept.end.time_ns) kept.end = end;
    return;
  }
  Produced& slot = it->second;
  if (slot.offset_key) produced_by_offset_[*slot.offset_key] = key;
  // Fetches that arrived first (another CPU, another ring-buffer pass, another host).
  auto match = [&](const Key& k) {
    auto [lo, hi] = fetched_.equal_range(k);
    for (auto f = lo; f != hi;) {
      const auto& c = slot.consumers;
      if (std::find(c.begin(), c.end(), f->second.consumer) == c.end()) {
        emit(slot, f->second.end, f->second.consumer, out, info);
      } else {
        ++counters_.duplicates;
      }
      f = fetched_.erase(f);
    }
  };
  match(key);
  if (slot.offset_key && *slot.offset_key != key) match(*slot.offset_key);
}

KafkaBatchMatcher::Fetch KafkaBatchMatcher::fetched(const kafka::BatchHalf& b, const KafkaBatchEnd& end,
                                                    const KafkaConsumerId& consumer, bool wait, bool room,
                                                    std::vector<Span>& out, std::vector<MessageSpanInfo>& info) {
  ++counters_.fetched;
  auto primary = kafka::primary_key(b);
  auto offset = kafka::offset_key(b);
  if (!primary && !offset) {
    ++counters_.unkeyed;
    return Fetch::unkeyed;
  }
  std::optional<Key> pk, ok;
  if (primary) pk = key_of(*primary);
  if (offset) ok = key_of(*offset);
  if (Produced* p = find(pk, ok)) {
    // A batch fetched again by the same consumer (a re-fetch) is one delivery, not two spans.
    if (std::find(p->consumers.begin(), p->consumers.end(), consumer) != p->consumers.end()) {
      ++counters_.duplicates;
      return Fetch::duplicate;
    }
    emit(*p, end, consumer, out, info);
    return Fetch::paired;
  }
  if (!wait) return Fetch::not_found;
  if (!room) {
    ++counters_.table_full;
    return Fetch::table_full;
  }
  // Waits under its primary key (or its offset key when it has no other).
  fetched_.emplace(pk ? *pk : *ok, Fetched{end, consumer, b});
  return Fetch::waiting;
}

void KafkaBatchMatcher::take_fetched_before(std::int64_t cutoff_ns, std::vector<WaitingFetch>& out) {
  for (auto it = fetched_.begin(); it != fetched_.end();) {
    if (it->second.end.age_ns < cutoff_ns) {
      out.push_back({std::move(it->second.batch), it->second.end, it->second.consumer});
      it = fetched_.erase(it);
    } else {
      ++it;
    }
  }
}

void KafkaBatchMatcher::expire(std::int64_t cutoff_ns) {
  for (auto it = produced_.begin(); it != produced_.end();) {
    if (it->second.end.age_ns < cutoff_ns) {
      if (it->second.consumers.empty()) ++counters_.unpaired_produced;
      if (it->second.offset_key) produced_by_offset_.erase(*it->second.offset_key);
      it = produced_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = fetched_.begin(); it != fetched_.end();) {
    if (it->second.end.age_ns < cutoff_ns) {
      ++counters_.unpaired_fetched;
      it = fetched_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace skewscope
