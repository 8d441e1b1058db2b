// The pendulum cost, made to fail on demand: it throws, or returns NaN,
// while the flags say so.
#ifndef DFMPC_TESTS_PLANNER_SABOTAGED_COST_H_
#define DFMPC_TESTS_PLANNER_SABOTAGED_COST_H_

#include <ATen/core/Tensor.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "dfmpc/planner/task_cost.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {

struct Sabotage {
  std::atomic<bool> throw_now{false};  // atomic: a planning thread may read them
  std::atomic<bool> nan_now{false};
};

class SabotagedCost : public TaskCost {
 public:
  explicit SabotagedCost(const Sabotage& sabotage)
      : inner_(MakeTaskCost(kPendulum)), sabotage_(sabotage) {}
  const std::string& task() const override { return inner_->task(); }
  int observation_dim() const override { return inner_->observation_dim(); }
  int action_dim() const override { return inner_->action_dim(); }

 protected:
  at::Tensor Evaluate(const at::Tensor& observations, const at::Tensor& actions,
                      int64_t first_step) const override {
    if (sabotage_.throw_now) throw std::runtime_error("sabotaged cost");
    const at::Tensor cost = inner_->StepCosts(observations, actions, first_step);
    return sabotage_.nan_now ? cost * std::nan("") : cost;
  }

 private:
  std::unique_ptr<TaskCost> inner_;
  const Sabotage& sabotage_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_TESTS_PLANNER_SABOTAGED_COST_H_
