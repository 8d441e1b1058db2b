// Counts the CPU tensor allocations of this process, for the benchmarks that
// report what a control step allocates.
#ifndef DFMPC_EXAMPLES_CLI_TENSOR_ALLOCATIONS_H_
#define DFMPC_EXAMPLES_CLI_TENSOR_ALLOCATIONS_H_

#include <cstdint>

namespace dfmpc::cli {

struct AllocationCount {
  int64_t allocations = 0;
  int64_t bytes = 0;
};

// Installs (once) an allocator that counts every CPU tensor allocation and
// forwards it to LibTorch's, and returns the counts since the process began
// counting. Eigen and std containers are not counted.
AllocationCount CpuTensorAllocations();

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TENSOR_ALLOCATIONS_H_
