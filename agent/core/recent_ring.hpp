// The last N items, oldest first, in one array allocated once. The recent spans were two deques
// (spans, topics) that allocated and freed a block every few spans on the ingest path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace skewscope {

template <class T>
class RecentRing {
 public:
  explicit RecentRing(std::size_t capacity) : items_(capacity > 0 ? capacity : 1) {}

  // Overwrites the oldest item once full (its storage, e.g. a string's buffer, is reused).
  void push(T item) { push_slot() = std::move(item); }
  // The slot of a new newest item, to be written in place: the oldest item once full (every
  // field the caller does not set keeps that item's value), a default one before.
  T& push_slot() {
    ++pushed_;
    std::size_t at = start_ + size_;
    if (at >= items_.size()) at -= items_.size();
    if (size_ < items_.size()) {
      ++size_;
    } else if (++start_ == items_.size()) {
      start_ = 0;
    }
    return items_[at];
  }

  std::size_t size() const { return size_; }
  // Items ever pushed: a reader that remembers it takes only the items pushed since, and knows
  // how many it missed when more than capacity() arrived in between (the OTLP feed counts them).
  std::uint64_t pushed() const { return pushed_; }
  std::size_t capacity() const { return items_.size(); }
  // i = 0 is the oldest item kept, size() - 1 the newest.
  const T& operator[](std::size_t i) const {
    std::size_t at = start_ + i;
    if (at >= items_.size()) at -= items_.size();
    return items_[at];
  }

 private:
  std::vector<T> items_;
  std::size_t start_ = 0;
  std::size_t size_ = 0;
  std::uint64_t pushed_ = 0;
};

}  // namespace skewscope
