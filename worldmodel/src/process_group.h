// The c10d process group of data-parallel training (internal to the world
// model): hides LibTorch's distributed headers from the trainer.
#ifndef DFMPC_WORLDMODEL_SRC_PROCESS_GROUP_H_
#define DFMPC_WORLDMODEL_SRC_PROCESS_GROUP_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "dfmpc/worldmodel/data_parallel.h"

namespace dfmpc::worldmodel {

class ProcessGroup {
 public:
  // Meets the other ranks at the store (rank 0 serves it). Throws
  // std::runtime_error naming the store when they do not all come within
  // the timeout.
  explicit ProcessGroup(const DataParallelOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Sums `tensors` (the same shapes, in the same order, on every rank)
  // across the ranks, in place. Throws std::runtime_error when a rank does
  // not take part within the timeout.
  void SumAcrossRanks(const std::vector<at::Tensor>& tensors);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_PROCESS_GROUP_H_
