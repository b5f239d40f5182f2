// What the protocol parsers are fed: one send or receive half of a TCP connection with the prefix
// of its bytes that the kernel side captured. Pure data; the parsers never do I/O.
#pragma once

#include <cstdint>
#include <span>

#include "skewscope/tcp_seq.hpp"

namespace skewscope::protocols {

// One send or receive half with the prefix of its bytes that BPF captured.
struct CapturedChunk {
  std::uint64_t ts_ns = 0;               // the half's timestamp (opaque to the parsers, copied into outputs)
  std::uint32_t seq = 0;                 // TCP sequence number of the chunk's first byte
  std::uint32_t length = 0;              // bytes the syscall moved
  std::span<const std::uint8_t> prefix;  // first prefix.size() <= length bytes; the rest was not captured
};

}  // namespace skewscope::protocols
