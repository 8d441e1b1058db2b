// The learned-dynamics peer (planner/mlp_mppi.h) as a timed policy of the
// commands that run episodes, like the planner's own wrapper
// (planner_policy.h).
#ifndef DFMPC_EXAMPLES_CLI_MLP_MPPI_POLICY_H_
#define DFMPC_EXAMPLES_CLI_MLP_MPPI_POLICY_H_

#include <Eigen/Core>
#include <memory>
#include <string>

#include "dfmpc/planner/mlp_mppi.h"
#include "dfmpc/task/task_spec.h"
#include "timed_policy.h"

namespace dfmpc::cli {

class MlpMppiPolicy final : public TimedPolicy {
 public:
  explicit MlpMppiPolicy(std::unique_ptr<planner::MlpMppi> mppi);

  void Reset(const Eigen::VectorXd& observation) override;
  // Records the latency, and as token-forwards the one-step predictions
  // (candidates x horizon) in `horizon` sequential calls.
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;
  int action_repeat() const override { return mppi_->action_repeat(); }

 private:
  std::unique_ptr<planner::MlpMppi> mppi_;
};

// Loads the ensemble at `path` for `task` (errors name the file) and builds
// the policy with the task's cost.
std::unique_ptr<MlpMppiPolicy> MakeMlpMppiPolicy(const std::string& path,
                                                 const task::TaskSpec& task,
                                                 const planner::MlpMppiOptions& options);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_MLP_MPPI_POLICY_H_
