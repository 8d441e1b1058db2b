// Policies map observations to actions. Baselines live here; the planner
// implements the same interface for learned world models.
#ifndef DFMPC_ENVS_POLICY_H_
#define DFMPC_ENVS_POLICY_H_

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"

namespace dfmpc::envs {

class Rng;  // defined privately; seeded, platform-independent

class Policy {
 public:
  virtual ~Policy() = default;
  // Called with the first observation of every episode.
  virtual void Reset(const Eigen::VectorXd& observation) = 0;
  virtual Eigen::VectorXd Act(const Eigen::VectorXd& observation) = 0;
};

// Independent uniform actions within the action bounds.
class RandomPolicy final : public Policy {
 public:
  RandomPolicy(const BoxSpec& action_spec, std::uint64_t seed);
  ~RandomPolicy() override;
  void Reset(const Eigen::VectorXd& observation) override {}
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;

 private:
  BoxSpec action_spec_;
  std::unique_ptr<Rng> rng_;
};

// Names accepted by MakeBaselinePolicy: "random", "oracle", "mixed".
std::vector<std::string> BaselinePolicyNames();

// A baseline controlling `env`. The oracle and mixed policies read the true
// simulation state of `env` (which must outlive them) at every Act, and use
// OracleOptions(env.task(), env.action_repeat()) with rollouts on `num_threads` threads. Throws
// std::invalid_argument for unknown names.
std::unique_ptr<Policy> MakeBaselinePolicy(const std::string& name, const Env& env,
                                           std::uint64_t seed, int num_threads = 1);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_POLICY_H_
