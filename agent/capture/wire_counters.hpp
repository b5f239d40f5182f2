// The wire capture's kernel-side counters (wire_capture.hpp reads them from its BPF maps). Their
// own header so the pure wire pipeline (core/wire_pipeline.*) takes them without the BPF loader.
#pragma once

#include <cstdint>

namespace skewscope {

struct WireCounters {
  std::uint64_t emitted = 0;
  std::uint64_t ringbuf_full = 0;
  std::uint64_t rx_skb_stamped = 0;
  std::uint64_t rx_unstamped = 0;
  std::uint64_t hw_stamped = 0;
  std::uint64_t not_parsed = 0;
  std::uint64_t malformed_records = 0;
};

}  // namespace skewscope
