#include "protocols/kafka/kafka_wire.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace skewscope::protocols::kafka::wire {
namespace {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): what record batches v2 carry.
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();

std::uint32_t crc32c_table(std::uint32_t c, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
// SSE4.2 has CRC-32C in hardware: ~20x the table's speed, and every captured batch is checked.
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t c, const std::uint8_t* p, std::size_t n) {
  std::uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
  }
  c = static_cast<std::uint32_t>(c64);
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(c, *p);
  return c;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

std::uint32_t crc32c(std::span<const std::uint8_t> bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
#if defined(__x86_64__)
  if (kHaveSse42) return crc32c_sse42(c, bytes.data(), bytes.size()) ^ 0xFFFFFFFFu;
#endif
  return crc32c_table(c, bytes.data(), bytes.size()) ^ 0xFFFFFFFFu;
}

}  // namespace skewscope::protocols::kafka::wire
