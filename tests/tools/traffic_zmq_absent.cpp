// Built instead of traffic_zmq.cpp when the build has no ZeroMQ (SKEWSCOPE_BENCH=OFF): lab_traffic
// then has no zmq-* subcommands, and asking for one is an unknown-subcommand error.
#include "traffic.hpp"

namespace skewscope::traffic {

void add_zmq_modes(CLI::App&, Options&, std::vector<Mode>&) {}

}  // namespace skewscope::traffic
