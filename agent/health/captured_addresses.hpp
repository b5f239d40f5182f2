// Which addresses some captured half had as its own, and when each was last seen: the pairing
// floor's "is this half's peer captured?" (pairing_window.hpp). The local core learns from its own
// halves, an exchange owner from the halves it consumes. An address none has come from for a
// window (its agent died, its host left, a pod's address was reused) is no longer captured: a
// half to it could not have paired and says nothing against its own domain.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "skewscope/address_set.hpp"

namespace skewscope {

class CapturedAddresses {
 public:
  static constexpr std::size_t kMaxAddresses = 1 << 16;
  explicit CapturedAddresses(std::int64_t forget_after_ns, std::size_t max_addresses = kMaxAddresses)
      : forget_after_ns_(forget_after_ns), max_addresses_(max_addresses) {}

  // `own` was a captured half's own address at `seen_ns`. Per half: one of the last two
  // addresses again (both ends of a conversation) costs two compares, no hash lookup.
  void learn(const Address& own, std::int64_t seen_ns);
  // Seen less than forget_after_ns before now_ns.
  bool captured(const Address& a, std::int64_t now_ns) const;
  // Forgets the addresses not seen for forget_after_ns, so the table holds the live ones. Scans
  // at most once per half of that time (captured() checks the age itself).
  void expire(std::int64_t now_ns);

  std::size_t size() const { return last_seen_ns_.size(); }
  std::uint64_t not_learned() const { return not_learned_; }  // the table was full

 private:
  std::int64_t forget_after_ns_;
  std::size_t max_addresses_;
  std::unordered_map<Address, std::int64_t, AddressHash> last_seen_ns_;
  // The last two learnt, with their entries (node pointers stay valid until erased); empty
  // slots have a null entry.
  std::array<Address, 2> recent_{};
  std::array<std::int64_t*, 2> recent_seen_{nullptr, nullptr};
  std::uint64_t not_learned_ = 0;
  std::int64_t last_scan_ns_ = 0;
};

}  // namespace skewscope
