// Spans that stand for several messages (Span::messages). Messages written by one call and read
// by one call have the same two stamps: the span of the one before takes the next one in (its
// count and bytes) when they are the same in all else, so that what comes after pairing runs once
// per run of them, not once per message (at millions of coalesced messages a second, that was
// half of the agent's time). Every statistic counts a span Span::messages times, so nothing it
// reports changes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "skewscope/span.hpp"

namespace skewscope {

// Takes `next` into `run` when they differ only in messages and bytes; returns whether it did.
inline bool join_span(Span& run, const Span& next) {
  if (run.send_ns != next.send_ns || run.recv_ns != next.recv_ns || run.capture_ns != next.capture_ns ||
      run.src != next.src || run.dst != next.dst || run.transport != next.transport ||
      run.timestamp_source != next.timestamp_source || run.messages > UINT32_MAX - next.messages)
    return false;
  run.messages += next.messages;
  run.bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{run.bytes} + next.bytes, UINT32_MAX));
  return true;
}

// The spans appended to `out` from index `from` on, each joined into the span before it when that
// one is at index `first` or later (one chunk's spans) and can take it in. Returns how many of the
// appended spans are left.
inline std::size_t join_appended(std::vector<Span>& out, std::size_t first, std::size_t from) {
  std::size_t kept = from;
  for (std::size_t i = from; i < out.size(); ++i) {
    if (kept > first && join_span(out[kept - 1], out[i])) continue;
    if (kept != i) out[kept] = out[i];
    ++kept;
  }
  out.resize(kept);
  return kept - from;
}

}  // namespace skewscope
