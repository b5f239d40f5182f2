// The property both fuzz drivers check on one input: decoding never reads out of bounds or
// throws, and a decoded data set or error re-encodes into bytes that decode to the same value.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>

#include "clocks/ptp_management.hpp"

namespace skewscope::clocks::fuzz {

inline void check_one(std::span<const std::uint8_t> input) {
  const auto r = ptp::decode(input);
  const ptp::Message* m = r ? &*r : nullptr;
  // OtherTlv carries no data to re-encode (a GET, or an id we do not decode).
  if (m == nullptr || std::holds_alternative<ptp::OtherTlv>(m->body)) return;
  const auto again = ptp::encode_response(*m, m->body, m->source);
  const auto r2 = ptp::decode(again);
  const ptp::Message* m2 = r2 ? &*r2 : nullptr;
  if (m2 == nullptr || m2->action != ptp::Action::kResponse || !(m2->body == m->body) ||
      m2->sequence_id != m->sequence_id)
    std::abort();
}

}  // namespace skewscope::clocks::fuzz
