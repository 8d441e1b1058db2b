#include "dfmpc/envs/policy.h"
#include "random.h"

namespace dfmpc::envs {

RandomPolicy::RandomPolicy(const BoxSpec& action_spec, std::uint64_t seed)
    : action_spec_(action_spec), rng_(std::make_unique<Rng>(seed)) {}

RandomPolicy::~RandomPolicy() = default;

Eigen::VectorXd RandomPolicy::Act(const Eigen::VectorXd& observation) {
  Eigen::VectorXd action(action_spec_.size());
  for (int i = 0; i < action.size(); ++i) {
    action[i] = rng_->Uniform(action_spec_.lower[i], action_spec_.upper[i]);
  }
  return action;
}

}  // namespace dfmpc::envs
