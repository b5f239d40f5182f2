// What the pairing floor needs of addresses (local halves in agent/core, exchanged ones in
// agent/exchange): a hash for sets of them, and which ones say nothing about a peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "skewscope/half.hpp"

namespace skewscope {

// 127.0.0.0/8 (IPv4-mapped) or ::1. Every network namespace has these addresses, so "some
// captured half had it as its own" says nothing about the process at the other end; and loopback
// is where undeclared local helpers sit (sidecar proxies, port forwarders), never a translation
// between hosts. The pairing floor never counts a half whose peer is one.
inline bool is_loopback(const Address& a) {
  static constexpr std::uint8_t kV4Mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(a.data(), kV4Mapped, sizeof kV4Mapped) == 0) return a[12] == 127;
  for (std::size_t i = 0; i < 15; ++i)
    if (a[i] != 0) return false;
  return a[15] == 1;
}

// Two multiply-xorshift rounds over the two words, so IPv4-mapped addresses that differ only in
// their last bytes spread well.
struct AddressHash {
  std::size_t operator()(const Address& a) const noexcept {
    std::uint64_t w[2];
    std::memcpy(w, a.data(), sizeof w);
    std::uint64_t h = (w[0] ^ 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31) ^ w[1]) * 0x94D049BB133111EBull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

}  // namespace skewscope
