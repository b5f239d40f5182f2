// The agent's own cost, under the names Prometheus client libraries use for every process, so
// existing dashboards and alerts apply: process_cpu_seconds_total, process_resident_memory_bytes.
#pragma once

#include <string>

namespace skewscope {

struct ProcessUsage {
  double cpu_seconds = 0;  // user + system, all threads
  double resident_bytes = 0;
  double start_time_seconds = 0;  // since the Unix epoch
  bool valid = false;
};

ProcessUsage read_process_usage();  // from /proc/self
void append_process_metrics(const ProcessUsage& usage, std::string& out);

}  // namespace skewscope
