// Prints populated and empty snapshots in Prometheus text format, for `promtool check metrics`.
#include <cstdio>
#include <string>

#include "clocks/render.hpp"
#include "render_sample.hpp"

int main(int argc, char** argv) {
  using namespace skewscope::clocks;
  std::string out;
  if (argc > 1 && std::string(argv[1]) == "--empty")
    append_prometheus(ClockSnapshot{}, out);
  else
    append_prometheus(testing::populated_snapshot(), out);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
