// Built instead of traffic_zmq.cpp when the build has no ZeroMQ (SKEWSCOPE_BENCH=OFF): zmq-pull
// and zmq-push still parse, so a test or script asking for them gets a clear error (exit 1), not
// an unknown-subcommand one.
#include "traffic.hpp"

#include <stdexcept>

namespace skewscope::traffic {

void add_zmq_modes(CLI::App& app, Options&, std::vector<Mode>& modes) {
  for (const char* name : {"zmq-pull", "zmq-push"}) {
    auto* command = app.add_subcommand(name, "(not in this build: no ZeroMQ)")->allow_extras();
    modes.push_back({command, Needs::kDurationOrDefault, [] {
                       throw std::runtime_error("this build has no ZeroMQ (configure with -DSKEWSCOPE_BENCH=ON)");
                     }});
  }
}

}  // namespace skewscope::traffic
