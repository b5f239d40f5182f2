// libFuzzer entry point (built only with clang): seed it with tests/data/protocols/kafka-*.cap.
#include "protocols_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  skewscope::protocols::fuzz::check_kafka({data, size});
  return 0;
}
