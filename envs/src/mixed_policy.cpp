#include <algorithm>
#include <stdexcept>

#include "dfmpc/envs/predictive_sampling.h"
#include "random.h"

namespace dfmpc::envs {

MixedPolicy::MixedPolicy(const Env& env, const PredictiveSamplingOptions& oracle,
                         const MixedOptions& mixed)
    : oracle_(env, oracle),
      options_(mixed),
      action_spec_(env.action_spec()),
      rng_(std::make_unique<Rng>(oracle.seed ^ 0x9E3779B97F4A7C15ULL)) {
  if (mixed.min_segment_length < 1 || mixed.max_segment_length < mixed.min_segment_length) {
    throw std::invalid_argument("mixed policy: need 1 <= min_segment_length <= max_segment_length");
  }
}

MixedPolicy::~MixedPolicy() = default;

void MixedPolicy::Reset(const Eigen::VectorXd& observation) {
  oracle_.Reset(observation);
  random_steps_left_ = 0;
}

Eigen::VectorXd MixedPolicy::Act(const Eigen::VectorXd& observation) {
  if (random_steps_left_ == 0 && rng_->Uniform() < options_.random_segment_probability) {
    const int span = options_.max_segment_length - options_.min_segment_length + 1;
    random_steps_left_ = options_.min_segment_length + static_cast<int>(rng_->Uniform() * span);
  }
  Eigen::VectorXd action(action_spec_.size());
  if (random_steps_left_ > 0) {
    --random_steps_left_;
    for (int i = 0; i < action.size(); ++i) {
      action[i] = rng_->Uniform(action_spec_.lower[i], action_spec_.upper[i]);
    }
    return action;
  }
  action = oracle_.Act(observation);
  for (int i = 0; i < action.size(); ++i) {
    action[i] = std::clamp(action[i] + options_.action_noise_std * rng_->Normal(),
                           action_spec_.lower[i], action_spec_.upper[i]);
  }
  return action;
}

}  // namespace dfmpc::envs
