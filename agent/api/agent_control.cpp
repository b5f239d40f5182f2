// The control socket's commands (agent_control.hpp says why they are a file of their own).
#include "api/agent_control.hpp"

#include "capture/clock_mapping.hpp"
#include "domains/domain_spec.hpp"
#include "domains/duration.hpp"

namespace skewscope {

std::string handle_control(const std::string& line, SharedCore& shared) {
  const std::string verb = "simulate ";
  if (line.rfind(verb, 0) != 0) return "error: unknown command (expected: simulate NAME=OFFSET[,DRIFTppm])";
  auto sim = parse_clock_simulation(line.substr(verb.size()));
  if (!sim) return "error: " + sim.error;
  auto core = shared.lock();
  auto id = core->domains().find(sim->domain);
  if (!id) return "error: no domain named '" + sim->domain + "'";
  core->simulated_clocks().set(*id, sim->offset_ns, sim->drift_ppm, monotonic_now_ns());
  return "ok " + sim->domain + " clock offset " + format_duration_ns(sim->offset_ns) + ", drift " +
         std::to_string(sim->drift_ppm) + " ppm";
}

}  // namespace skewscope
