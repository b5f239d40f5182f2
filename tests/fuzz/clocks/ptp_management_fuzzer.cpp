// libFuzzer entry point (built only with clang): seed it with tests/data/ptp4l.
#include <cstddef>
#include <cstdint>

#include "ptp_management_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  skewscope::clocks::fuzz::check_one({data, size});
  return 0;
}
