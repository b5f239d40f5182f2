// The bounded store under every table of translations (the local NatTable, the exchange's
// RemoteTranslations): a connection is kept under its original key and under that key turned
// round (the reply direction), each with its own value, so either direction's halves find it.
//
// Bounded: a full table evicts its oldest connection. A connection can be set to linger: it is
// forgotten once its time has passed (expire()). A connection learnt again (a reused tuple) gets a
// new generation, so queue items of the older one are recognised as stale and skipped.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "skewscope/half.hpp"

namespace skewscope::translate {

inline FlowKey turned(const FlowKey& k) { return FlowKey{k.dst_addr, k.src_addr, k.dst_port, k.src_port}; }

template <class Value>
class TwoWayFlowTable {
 public:
  struct Slot {
    Value value;
    std::uint64_t generation = 0;  // which learning of the connection
  };
  struct Inserted {
    std::uint64_t generation = 0;
    std::size_t evicted = 0;  // older connections dropped to make room
  };

  explicit TwoWayFlowTable(std::size_t max_connections) : max_connections_(max_connections) {}

  Slot* find(const FlowKey& key) {
    auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : &it->second;
  }
  // The other direction's slot, if it still belongs to the same learning.
  Slot* find_turned(const FlowKey& key, std::uint64_t generation) {
    Slot* slot = find(turned(key));
    return slot && slot->generation == generation ? slot : nullptr;
  }

  // Keeps a connection: `original` maps to `forward`, turned(original) to `backward`. What
  // `original` held before is replaced (a reused tuple: the newer wins).
  Inserted insert(const FlowKey& original, Value forward, Value backward) {
    Inserted result;
    if (Slot* known = find(original)) remove(original, known->generation);
    while (live_ >= max_connections_ && !by_age_.empty()) {
      const Queued oldest = by_age_.front();
      by_age_.pop_front();
      if (holds(oldest)) {
        remove(oldest.original, oldest.generation);
        ++result.evicted;
      }
    }
    result.generation = next_generation_++;
    by_key_[original] = Slot{std::move(forward), result.generation};
    by_key_[turned(original)] = Slot{std::move(backward), result.generation};
    ++live_;
    by_age_.push_back({original, result.generation, 0});
    // Items of removed or replaced connections stay queued until they reach the front; when they
    // outnumber the live ones (a long-lived connection holds the front), drop them all at once.
    if (by_age_.size() > 2 * max_connections_ + 16)
      std::erase_if(by_age_, [this](const Queued& q) { return !holds(q); });
    return result;
  }

  void remove(const FlowKey& original, std::uint64_t generation) {
    auto it = by_key_.find(original);
    if (it == by_key_.end() || it->second.generation != generation) return;
    by_key_.erase(it);
    auto back = by_key_.find(turned(original));
    if (back != by_key_.end() && back->second.generation == generation) by_key_.erase(back);
    --live_;
  }

  // Forget the connection at `until_ns`; calls must come in order of `until_ns`.
  void linger(const FlowKey& original, std::uint64_t generation, std::int64_t until_ns) {
    lingering_.push_back({original, generation, until_ns});
  }

  // Forgets the connections whose linger has passed; returns how many.
  std::size_t expire(std::int64_t now_ns) {
    std::size_t expired = 0;
    while (!lingering_.empty() && lingering_.front().until_ns <= now_ns) {
      const Queued q = lingering_.front();
      lingering_.pop_front();
      if (holds(q)) {
        remove(q.original, q.generation);
        ++expired;
      }
    }
    // Keep the eviction queue from growing without bound by dead items (removed or replaced).
    while (!by_age_.empty() && !holds(by_age_.front())) by_age_.pop_front();
    return expired;
  }

  bool empty() const { return by_key_.empty(); }
  std::size_t connections() const { return live_; }
  std::size_t keys() const { return by_key_.size(); }

 private:
  struct Queued {
    FlowKey original;
    std::uint64_t generation = 0;
    std::int64_t until_ns = 0;  // lingering queue only
  };
  bool holds(const Queued& q) const {
    auto it = by_key_.find(q.original);
    return it != by_key_.end() && it->second.generation == q.generation;
  }

  std::size_t max_connections_;
  std::unordered_map<FlowKey, Slot, FlowKeyHash> by_key_;
  std::deque<Queued> by_age_;     // every learning, oldest first: eviction order
  std::deque<Queued> lingering_;  // by expiry
  std::uint64_t next_generation_ = 1;
  std::size_t live_ = 0;
};

}  // namespace skewscope::translate
