// One side of a message, after capture (decoded) and domains (assigned a clock).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>

#include "skewscope/span.hpp"

namespace skewscope {

enum class HalfKind : std::uint8_t { send, recv };

using Address = std::array<std::uint8_t, 16>;  // IPv6 or IPv4-mapped IPv6

// Directed: from the sender's socket to the receiver's. Both halves of a message compute the
// same key: a send uses (local, remote), a receive (remote, local).
struct FlowKey {
  Address src_addr{};
  Address dst_addr{};
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;

  // By words: a defaulted == compared the arrays through a memcmp call, per half.
  bool operator==(const FlowKey& o) const {
    return src_port == o.src_port && dst_port == o.dst_port && same_bytes(src_addr, o.src_addr) &&
           same_bytes(dst_addr, o.dst_addr);
  }

 private:
  static bool same_bytes(const Address& a, const Address& b) {
    std::uint64_t x[2], y[2];
    std::memcpy(x, a.data(), 16);
    std::memcpy(y, b.data(), 16);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
  }
};

struct FlowKeyHash {
  // By 64-bit words, each folded in with a multiply: a byte-wise FNV-1a took 36 dependent
  // multiplies per key, and libstdc++ hashes again for every node a bucket walk passes (hash codes
  // are not cached for a hash it deems fast), which made hashing a tenth of the agent's time under
  // ZMTP message load. Flows are not adversarial input; only in-memory tables use this.
  std::size_t operator()(const FlowKey& k) const noexcept {
    std::uint64_t w[5];
    std::memcpy(&w[0], k.src_addr.data(), 16);
    std::memcpy(&w[2], k.dst_addr.data(), 16);
    w[4] = static_cast<std::uint64_t>(k.src_port) << 16 | k.dst_port;
    std::uint64_t h = 0x243f6a8885a308d3ull;
    for (std::uint64_t x : w) {
      h = (h ^ x) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 32;
    }
    return static_cast<std::size_t>(h);
  }
};

struct Half {
  HalfKind kind = HalfKind::send;
  Transport transport = Transport::tcp;
  FlowKey flow;
  std::uint32_t seq = 0;  // sequence number of the first byte moved
  std::uint32_t bytes = 0;
  std::int64_t capture_ns = 0;  // CLOCK_MONOTONIC at capture: true time on this kernel
  std::int64_t domain_ns = 0;   // wall-clock time as the half's domain clock reads it
  DomainId domain = 0;
};

}  // namespace skewscope
