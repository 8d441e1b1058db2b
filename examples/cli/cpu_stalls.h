// Where a thread's time went while it could not run, for `dfmpc bench
// deadline`'s attribution of its worst overruns: the guest kernel kept it
// waiting on its CPU's run queue (another task ran), or the hypervisor ran
// another machine on that virtual CPU (steal).
#ifndef DFMPC_EXAMPLES_CLI_CPU_STALLS_H_
#define DFMPC_EXAMPLES_CLI_CPU_STALLS_H_

namespace dfmpc::cli {

struct StallCounters {
  double run_queue_wait_ms = 0.0;  // the calling thread's, since it started
  double steal_ms = 0.0;           // the CPU's, since boot (10 ms resolution)
};

// Reads the calling thread's counters (/proc/thread-self/schedstat) and
// `cpu`'s steal (/proc/stat); a counter the kernel does not keep reads 0.
StallCounters ReadStallCounters(int cpu);

// b - a, counter by counter.
StallCounters operator-(const StallCounters& b, const StallCounters& a);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_CPU_STALLS_H_
