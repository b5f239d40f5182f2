// One direction of a ZMTP 3.0 connection as bytes, for the tests and benches that feed the
// message pairing: the greeting (NULL mechanism), a READY command, then `messages` one-frame
// messages of `size` body bytes (short frames: size < 256). Message m starts at byte 72 + m * (2 + size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace skewscope::test {

inline std::vector<std::uint8_t> zmtp_stream(int messages, std::size_t size) {
  std::vector<std::uint8_t> s(64, 0);
  // One allocation: gcc 12 otherwise warns, wrongly, of a copy out of bounds in the inserts below.
  s.reserve(64 + 8 + static_cast<std::size_t>(messages) * (2 + size));
  s[0] = 0xff;
  s[9] = 0x7f;
  s[10] = 3;
  std::memcpy(&s[12], "NULL", 4);
  const std::uint8_t ready[] = {0x04, 0x06, 0x05, 'R', 'E', 'A', 'D', 'Y'};
  s.insert(s.end(), std::begin(ready), std::end(ready));
  for (int m = 0; m < messages; ++m) {
    s.push_back(0x00);
    s.push_back(static_cast<std::uint8_t>(size));
    s.insert(s.end(), size, static_cast<std::uint8_t>('a' + m % 26));
  }
  return s;
}

}  // namespace skewscope::test
