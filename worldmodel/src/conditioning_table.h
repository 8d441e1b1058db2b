// An inference-time memo of the timestep conditioning (internal to the
// world model). A token's modulation rows (every block's and the final
// norm's) depend on its timestep and the conditioning weights alone, and a
// planner uses a few dozen distinct timesteps, so under InferenceMode the
// transformer computes each row once and afterwards only gathers rows: a
// single index_select instead of the time MLP and one linear layer per
// block on every call.
#ifndef DFMPC_WORLDMODEL_SRC_CONDITIONING_TABLE_H_
#define DFMPC_WORLDMODEL_SRC_CONDITIONING_TABLE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "weight_signature.h"

namespace dfmpc::worldmodel {

class ConditioningTable {
 public:
  // Computes the rows of `steps` ([U] int64, on the weights' device).
  using ComputeRows = std::function<at::Tensor(const at::Tensor& steps)>;

  // Rows may be memoized where MemoizableNow(weights) (weight_signature.h).

  // The rows of `token_steps` (one per token, in order), as a [tokens,
  // row width] tensor on the weights' device. Missing rows are computed by
  // `compute`; every row is dropped first when a weight changed since the
  // rows were made (another storage or a newer version). Thread-safe.
  at::Tensor Gather(const std::vector<int64_t>& token_steps, const std::vector<at::Tensor>& weights,
                    const ComputeRows& compute);

  // Bumped whenever rows are dropped, so that a consumer that copied rows
  // (a captured CUDA graph) can tell they went stale.
  int64_t generation() const;

 private:
  mutable std::mutex mutex_;
  WeightSignature signature_;
  std::unordered_map<int64_t, int64_t> row_of_step_;
  at::Tensor rows_;  // [distinct steps seen, row width]
  int64_t generation_ = 0;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_CONDITIONING_TABLE_H_
