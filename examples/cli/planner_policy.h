// The dfmpc planner as an envs::Policy, for the commands that run episodes
// (control, eval, bench mpc), plus the planner's command-line options.
#ifndef DFMPC_EXAMPLES_CLI_PLANNER_POLICY_H_
#define DFMPC_EXAMPLES_CLI_PLANNER_POLICY_H_

#include <Eigen/Core>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "dfmpc/planner/planner.h"
#include "dfmpc/task/task_spec.h"
#include "timed_policy.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

// Planner options as the command line gives them: one flag per option of
// planner::PlannerOptionTable(). Those not given keep the task file's
// value (or a distilled model's levels), so a flag overrides the file and
// nothing else does.
struct PlannerFlags {
  std::string model;
  // The text of each flag given, by option key.
  std::map<std::string, std::optional<std::string>> given;

  // The flags given, parsed (std::invalid_argument naming a bad value).
  planner::PlannerOverrides Overrides() const;
  // The options for `task`, each with its source (ResolvePlannerOptions;
  // `model_levels`: a distilled model's K, 0: any).
  planner::ResolvedPlannerOptions Resolve(const task::TaskSpec& task, int model_levels = 0) const;
};

// A block cache setting as benchmarks spell it, "F/R": F front tokens, the
// whole plan every R control steps (both >= 1). Throws
// std::invalid_argument naming the text otherwise.
struct BlockCacheSetting {
  int front_tokens = 0, refresh_every = 1;
};
BlockCacheSetting ParseBlockCache(const std::string& text);

// The model shipped for `task` in the source tree (examples/models/TASK.pt).
std::string ShippedModelPath(const std::string& task);

// What `bench deadline` and `bench soak` plan with on the shipped pendulum
// model: the library defaults (H = 32, N = 8) at its K = 8 levels with the
// MPPI average. Fixed rather than the task file's table, so that their rows
// stay comparable when the table is re-tuned.
planner::PlannerOptions RealtimeBenchOptions();

// Adds --model (required when `model_required`) and the planner options.
void AddPlannerFlags(CLI::App& cmd, PlannerFlags& flags, bool model_required);

class PlannerPolicy final : public TimedPolicy {
 public:
  explicit PlannerPolicy(std::unique_ptr<planner::Planner> planner);
  void Reset(const Eigen::VectorXd& observation) override;
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;
  int action_repeat() const override { return planner_->action_repeat(); }

 private:
  std::unique_ptr<planner::Planner> planner_;
};

// Loads the model of `flags` for `task`, the task's shipped model when none
// is given (a missing shipped model or a model for another task is an error).
// `print_options`: prints every option with its source first.
std::unique_ptr<PlannerPolicy> MakePlannerPolicy(const PlannerFlags& flags,
                                                 const task::TaskSpec& task,
                                                 bool print_options = false);

// One line: mode, H, K, re-noise, N, selection (and guidance and the block
// cache when on).
std::string DescribePlannerOptions(const planner::PlannerOptions& options);

// Every option, its value and where it came from, under a heading.
void PrintResolvedOptions(const planner::ResolvedPlannerOptions& resolved);

// Physics steps per control step of an environment `policy` controls: the
// model's own when `requested` is 0; any other value that differs from it
// is an error (the model would predict at the wrong control rate).
int ModelActionRepeat(const TimedPolicy& policy, int requested);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_PLANNER_POLICY_H_
