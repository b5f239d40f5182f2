// libFuzzer entry point (built only with clang): seed it with tests/data/protocols/zmtp-*.cap.
#include "protocols_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  skewscope::protocols::fuzz::check_zmtp({data, size});
  return 0;
}
