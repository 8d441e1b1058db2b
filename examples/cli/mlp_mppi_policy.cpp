#include "mlp_mppi_policy.h"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace dfmpc::cli {

MlpMppiPolicy::MlpMppiPolicy(std::unique_ptr<planner::MlpMppi> mppi) : mppi_(std::move(mppi)) {}

void MlpMppiPolicy::Reset(const Eigen::VectorXd& observation) { mppi_->Reset(observation); }

Eigen::VectorXd MlpMppiPolicy::Act(const Eigen::VectorXd& observation) {
  const auto start = std::chrono::steady_clock::now();
  Eigen::VectorXd action = mppi_->Act(observation);
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  const planner::MlpMppiOptions& options = mppi_->options();
  records_.push_back({elapsed.count(),
                      static_cast<std::int64_t>(options.num_samples) * options.horizon,
                      options.horizon});
  return action;
}

std::unique_ptr<MlpMppiPolicy> MakeMlpMppiPolicy(const std::string& path,
                                                 const task::TaskSpec& task,
                                                 const planner::MlpMppiOptions& options) {
  if (path.empty()) {
    throw std::invalid_argument(
        "--policy mlp-mppi needs --mlp-model (an ensemble from `dfmpc train-mlp --ensemble E`)");
  }
  return std::make_unique<MlpMppiPolicy>(planner::MlpMppi::FromFile(path, options, task));
}

}  // namespace dfmpc::cli
