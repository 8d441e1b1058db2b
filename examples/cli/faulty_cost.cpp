#include "faulty_cost.h"

#include <ATen/ATen.h>

#include <limits>
#include <stdexcept>
#include <utility>

namespace dfmpc::cli {

FaultyCost::FaultyCost(std::unique_ptr<planner::TaskCost> inner, std::int64_t throw_every,
                       std::int64_t nan_every)
    : inner_(std::move(inner)), throw_every_(throw_every), nan_every_(nan_every) {
  if (throw_every < 0 || nan_every < 0) {
    throw std::invalid_argument("fault periods must be >= 0 (0: never)");
  }
}

at::Tensor FaultyCost::Evaluate(const at::Tensor& observations, const at::Tensor& actions,
                                int64_t first_step) const {
  const std::int64_t call = ++calls_;
  if (throw_every_ > 0 && call % throw_every_ == 0) {
    ++thrown_;
    throw std::runtime_error("injected cost failure");
  }
  const at::Tensor cost = inner_->StepCosts(observations, actions, first_step);
  if (nan_every_ > 0 && call % nan_every_ == 0) {
    ++nans_;
    return cost * std::numeric_limits<double>::quiet_NaN();
  }
  return cost;
}

}  // namespace dfmpc::cli
