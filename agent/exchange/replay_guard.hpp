// Which signed records were already taken: a record is taken once, and only while it is fresh.
// No I/O; the consumer thread owns one and gives it the time.
//
// Fresh: signed within `window_ns` of this agent's CLOCK_REALTIME, either way (a reader's memory
// of sequence numbers need only cover that window). Once: per (signer, epoch, Kafka partition),
// the highest sequence seen and which of the kReplayBits below it were seen. Per partition, since
// one signer's sequence is shared by all its records and different partitions arrive interleaved
// in any order, while one partition delivers one signer's records in the order produced.
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "exchange/record_codec.hpp"
#include "exchange/record_signing.hpp"
#include "skewscope/result.hpp"

namespace skewscope::exchange {

inline constexpr std::int64_t kDefaultReplayWindowNs = 120'000'000'000;  // docs/security.md
inline constexpr std::size_t kReplayBits = 4096;
inline constexpr std::size_t kMaxReplayStreams = 16384;

class ReplayGuard {
 public:
  explicit ReplayGuard(std::int64_t window_ns = kDefaultReplayWindowNs) : window_ns_(window_ns) {}

  // Ok (and remembered) when fresh and not seen; else stale, replayed or replay_table_full.
  // Call only for a record whose signature was verified: an unverified one must not move state.
  Result<bool, RecordReject> take(const SignedFields& fields, std::int32_t partition, std::int64_t now_realtime_ns);
  std::size_t streams() const { return streams_.size(); }

 private:
  struct Stream {
    std::uint64_t highest = 0;
    std::bitset<kReplayBits> seen;  // bit i: sequence highest - i was taken
    std::int64_t last_taken_ns = 0;
  };
  using StreamKey = std::tuple<std::string, std::uint64_t, std::int32_t>;
  void forget_old(std::int64_t now_realtime_ns);

  std::int64_t window_ns_;
  std::map<StreamKey, Stream> streams_;
};

}  // namespace skewscope::exchange
