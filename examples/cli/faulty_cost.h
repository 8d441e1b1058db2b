// A task's cost that fails on a schedule, for fault injection (dfmpc bench
// soak): every `throw_every`-th evaluation throws, every `nan_every`-th
// returns NaN (0: never). Counts what it injected; evaluations happen on the
// planning thread, the counts are read after it stopped or under the
// runner's own synchronisation.
#ifndef DFMPC_EXAMPLES_CLI_FAULTY_COST_H_
#define DFMPC_EXAMPLES_CLI_FAULTY_COST_H_

#include <ATen/core/Tensor.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "dfmpc/planner/task_cost.h"

namespace dfmpc::cli {

class FaultyCost : public planner::TaskCost {
 public:
  FaultyCost(std::unique_ptr<planner::TaskCost> inner, std::int64_t throw_every,
             std::int64_t nan_every);

  const std::string& task() const override { return inner_->task(); }
  int observation_dim() const override { return inner_->observation_dim(); }
  int action_dim() const override { return inner_->action_dim(); }

  std::int64_t thrown() const { return thrown_; }
  std::int64_t nans() const { return nans_; }

 protected:
  at::Tensor Evaluate(const at::Tensor& observations, const at::Tensor& actions,
                      int64_t first_step) const override;

 private:
  std::unique_ptr<planner::TaskCost> inner_;
  const std::int64_t throw_every_, nan_every_;
  mutable std::atomic<std::int64_t> calls_{0}, thrown_{0}, nans_{0};
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_FAULTY_COST_H_
