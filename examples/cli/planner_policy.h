// The dfmpc planner as an envs::Policy, for the commands that run episodes
// (control, eval, bench mpc), plus the planner's command-line options.
#ifndef DFMPC_EXAMPLES_CLI_PLANNER_POLICY_H_
#define DFMPC_EXAMPLES_CLI_PLANNER_POLICY_H_

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/policy.h"
#include "dfmpc/planner/planner.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

// Planner options as the command line spells them.
struct PlannerFlags {
  std::string model;
  std::string mode = "warm";
  std::string selection = "best";
  planner::PlannerOptions options;

  // Parses mode and selection into `options` (std::invalid_argument if unknown).
  planner::PlannerOptions Resolve() const;
};

// The model shipped for `task` in the source tree (examples/models/TASK.pt).
std::string ShippedModelPath(const std::string& task);

// Adds --model (required when `model_required`) and the planner options.
void AddPlannerFlags(CLI::App& cmd, PlannerFlags& flags, bool model_required);

// Per-step cost of the planner over a run.
struct StepRecord {
  double latency_ms = 0.0;
  std::int64_t token_forwards = 0;
  int calls = 0;
};

class PlannerPolicy final : public envs::Policy {
 public:
  explicit PlannerPolicy(std::unique_ptr<planner::Planner> planner);
  void Reset(const Eigen::VectorXd& observation) override;
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;

  planner::Planner& planner() { return *planner_; }
  // Every Act since construction.
  const std::vector<StepRecord>& records() const { return records_; }

 private:
  std::unique_ptr<planner::Planner> planner_;
  std::vector<StepRecord> records_;
};

// Loads the model of `flags` for `task`, the task's shipped model when none
// is given (a missing shipped model or a model for another task is an error).
std::unique_ptr<PlannerPolicy> MakePlannerPolicy(const PlannerFlags& flags,
                                                 const std::string& task);

// Physics steps per control step of an environment `planner` controls: the
// model's own when `requested` is 0; any other value that differs from it
// is an error (the model would predict at the wrong control rate).
int PlannerActionRepeat(const planner::Planner& planner, int requested);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_PLANNER_POLICY_H_
