#pragma once
// How many slots the sock_tp family's send table has (bpf/tcp_sock_tp.bpf.h: a thread's send
// between its start and its end). Pure, so the rule and its one knob are tested without BPF.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "skewscope/result.hpp"

namespace skewscope {

// 16 384 slots of one cache line (1 MiB): a thread keeps its slot until it exits, and one that
// finds none free near its hash's home uses task-local storage instead (slower, never lost).
inline constexpr std::uint32_t kSendSlotsDefault = 1u << 14;
inline constexpr std::uint32_t kSendSlotsMax = 1u << 20;

// A test sizes the table down with this variable, so that threads must share it and the
// task-local path runs (tests/integration/tcp_send_slots.test.sh). Not an operator's setting.
inline constexpr const char* kSendSlotsEnv = "SKEWSCOPE_SEND_SLOTS";

// The table's size from the variable's value (unset or empty: the default): a power of two from
// 1 to kSendSlotsMax, or a one-line error naming the variable.
inline Result<std::uint32_t> send_slots_from(const char* value) {
  if (value == nullptr || *value == '\0') return Result<std::uint32_t>::ok(kSendSlotsDefault);
  const std::string_view text(value);
  std::uint64_t n = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (err != std::errc{} || end != text.data() + text.size() || n == 0 || n > kSendSlotsMax || (n & (n - 1)) != 0)
    return Result<std::uint32_t>::fail(std::string(kSendSlotsEnv) + "='" + std::string(text) +
                                       "': not a power of two from 1 to " + std::to_string(kSendSlotsMax));
  return Result<std::uint32_t>::ok(static_cast<std::uint32_t>(n));
}

}  // namespace skewscope
