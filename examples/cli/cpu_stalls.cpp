#include "cpu_stalls.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace dfmpc::cli {

StallCounters ReadStallCounters(int cpu) {
  StallCounters counters;
  // "run_ns wait_ns timeslices" (present when the kernel keeps schedstats).
  std::ifstream schedstat("/proc/thread-self/schedstat");
  double run_ns = 0.0, wait_ns = 0.0;
  if (schedstat >> run_ns >> wait_ns) counters.run_queue_wait_ms = wait_ns * 1e-6;
  // "cpuN user nice system idle iowait irq softirq steal ..." in USER_HZ ticks.
  std::ifstream stat("/proc/stat");
  const std::string name = "cpu" + std::to_string(cpu);
  const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  for (std::string line; std::getline(stat, line);) {
    std::istringstream fields(line);
    std::string label;
    fields >> label;
    if (label != name) continue;
    double ticks[8] = {};
    for (double& t : ticks) fields >> t;
    counters.steal_ms = ticks[7] * ms_per_tick;
    break;
  }
  return counters;
}

StallCounters operator-(const StallCounters& b, const StallCounters& a) {
  return {b.run_queue_wait_ms - a.run_queue_wait_ms, b.steal_ms - a.steal_ms};
}

}  // namespace dfmpc::cli
