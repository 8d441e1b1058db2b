// Resident memory of this process, for the long-running benchmarks.
#ifndef DFMPC_EXAMPLES_CLI_RESIDENT_MEMORY_H_
#define DFMPC_EXAMPLES_CLI_RESIDENT_MEMORY_H_

namespace dfmpc::cli {

// VmRSS from /proc/self/status in KiB, or -1 where it cannot be read.
long ResidentKib();

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_RESIDENT_MEMORY_H_
