#include "exchange/replay_guard.hpp"

namespace skewscope::exchange {

Result<bool, RecordReject> ReplayGuard::take(const SignedFields& f, std::int32_t partition,
                                             std::int64_t now_realtime_ns) {
  using Taken = Result<bool, RecordReject>;
  // Wrapping-safe distance: a hostile timestamp must not overflow.
  const std::uint64_t diff =
      f.signed_at_ns > now_realtime_ns
          ? static_cast<std::uint64_t>(f.signed_at_ns) - static_cast<std::uint64_t>(now_realtime_ns)
          : static_cast<std::uint64_t>(now_realtime_ns) - static_cast<std::uint64_t>(f.signed_at_ns);
  if (diff > static_cast<std::uint64_t>(window_ns_)) return Taken::fail(RecordReject::stale);
  StreamKey key{f.signer, f.epoch, partition};
  auto it = streams_.find(key);
  if (it == streams_.end()) {
    if (streams_.size() >= kMaxReplayStreams) forget_old(now_realtime_ns);
    if (streams_.size() >= kMaxReplayStreams) return Taken::fail(RecordReject::replay_table_full);
    it = streams_.emplace(std::move(key), Stream{}).first;
    it->second.highest = f.sequence;
    it->second.seen.set(0);
    it->second.last_taken_ns = now_realtime_ns;
    return Taken::ok(true);
  }
  Stream& s = it->second;
  if (f.sequence > s.highest) {
    const std::uint64_t shift = f.sequence - s.highest;
    if (shift >= kReplayBits) {
      s.seen.reset();
    } else {
      s.seen <<= static_cast<std::size_t>(shift);
    }
    s.highest = f.sequence;
    s.seen.set(0);
  } else {
    const std::uint64_t back = s.highest - f.sequence;
    // Older than the bitmap reaches: cannot tell a late record from a replay, so refuse it.
    if (back >= kReplayBits || s.seen.test(static_cast<std::size_t>(back))) return Taken::fail(RecordReject::replayed);
    s.seen.set(static_cast<std::size_t>(back));
  }
  s.last_taken_ns = now_realtime_ns;
  return Taken::ok(true);
}

// A stream that took nothing for two windows can be forgotten: every record it could still be
// shown was signed before its last one was taken (give or take the two hosts' clock difference,
// which the freshness check bounds by one window), so it is stale by now.
void ReplayGuard::forget_old(std::int64_t now_realtime_ns) {
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (now_realtime_ns - it->second.last_taken_ns > 2 * window_ns_) {
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace skewscope::exchange
