#include "exchange/flow_keys.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <tuple>

namespace skewscope::exchange {
namespace {

bool is_v4_mapped(const Address& a) {
  return std::all_of(a.begin(), a.begin() + 10, [](std::uint8_t b) { return b == 0; }) && a[10] == 0xff &&
         a[11] == 0xff;
}

// FNV-1a then a SplitMix64 finaliser: fixed arithmetic (not std::hash, which may differ between
// builds), and the finaliser spreads FNV's weak low bits before the modulo of flow_sampled.
struct StableHash {
  std::uint64_t h = 1469598103934665603ull;
  void byte(std::uint8_t b) { h = (h ^ b) * 1099511628211ull; }
  void bytes(const Address& a) {
    for (auto b : a) byte(b);
  }
  void port(std::uint16_t p) {
    byte(static_cast<std::uint8_t>(p >> 8));
    byte(static_cast<std::uint8_t>(p & 0xff));
  }
  std::uint64_t finish() const {
    std::uint64_t z = h + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

}  // namespace

std::string address_text(const Address& a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (is_v4_mapped(a)) {
    inet_ntop(AF_INET, a.data() + 12, text, sizeof text);
  } else {
    inet_ntop(AF_INET6, a.data(), text, sizeof text);
  }
  return text;
}

std::string host_pair_key(const FlowKey& flow) {
  const Address& lo = std::min(flow.src_addr, flow.dst_addr);
  const Address& hi = std::max(flow.src_addr, flow.dst_addr);
  return address_text(lo) + "|" + address_text(hi);
}

std::uint64_t canonical_flow_hash(const FlowKey& flow) {
  auto a = std::tie(flow.src_addr, flow.src_port);
  auto b = std::tie(flow.dst_addr, flow.dst_port);
  const bool swap = b < a;
  StableHash h;
  h.bytes(swap ? flow.dst_addr : flow.src_addr);
  h.port(swap ? flow.dst_port : flow.src_port);
  h.bytes(swap ? flow.src_addr : flow.dst_addr);
  h.port(swap ? flow.src_port : flow.dst_port);
  return h.finish();
}

}  // namespace skewscope::exchange
