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
  std::size_t operator()(const FlowKey& k) const noexcept {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: cheap, and flows are not adversarial input
    auto mix = [&h](std::uint8_t b) { h = (h ^ b) * 1099511628211ull; };
    for (auto b : k.src_addr) mix(b);
    for (auto b : k.dst_addr) mix(b);
    for (int i = 0; i < 2; ++i) mix(static_cast<std::uint8_t>(k.src_port >> (8 * i)));
    for (int i = 0; i < 2; ++i) mix(static_cast<std::uint8_t>(k.dst_port >> (8 * i)));
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
