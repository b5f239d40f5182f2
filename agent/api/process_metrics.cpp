#include "api/process_metrics.hpp"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "skewscope/prometheus_text.hpp"

namespace skewscope {

ProcessUsage read_process_usage() {
  ProcessUsage u;
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return u;
  // Fields after the command name, which is in parentheses and may itself contain spaces.
  auto close = line.rfind(')');
  if (close == std::string::npos) return u;
  std::istringstream fields(line.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0, starttime = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) stime = std::stod(f);
    if (i == 22) {
      starttime = std::stod(f);
      break;
    }
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  u.cpu_seconds = (utime + stime) / ticks;
  std::ifstream statm("/proc/self/statm");
  double pages_total = 0, pages_resident = 0;
  if (statm >> pages_total >> pages_resident)
    u.resident_bytes = pages_resident * static_cast<double>(sysconf(_SC_PAGESIZE));
  // starttime is in ticks since boot: boot time = realtime now - monotonic-since-boot now.
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  double boot_epoch = (real.tv_sec - boot.tv_sec) + (real.tv_nsec - boot.tv_nsec) * 1e-9;
  u.start_time_seconds = boot_epoch + starttime / ticks;
  u.valid = true;
  return u;
}

void append_process_metrics(const ProcessUsage& u, std::string& out) {
  if (!u.valid) return;
  PrometheusWriter w(out);
  w.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
  w.sample("process_cpu_seconds_total", u.cpu_seconds);
  w.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  w.sample("process_resident_memory_bytes", u.resident_bytes);
  w.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
  w.sample("process_start_time_seconds", u.start_time_seconds);
}

}  // namespace skewscope
