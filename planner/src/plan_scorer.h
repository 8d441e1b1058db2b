// Scores a step's candidate plans with the task cost, picks the one to keep
// and the action to execute, and describes the kept plan in the
// environment's units (Planner::plan()).
#ifndef DFMPC_PLANNER_SRC_PLAN_SCORER_H_
#define DFMPC_PLANNER_SRC_PLAN_SCORER_H_

#include <ATen/core/Tensor.h>

#include <Eigen/Core>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/tokens.h"
#include "plan_denoiser.h"

namespace dfmpc::worldmodel {
struct MlpEnsembleCheckpoint;
}  // namespace dfmpc::worldmodel

namespace dfmpc::planner {

// The candidate a step keeps, with what the planner stores of it.
struct Choice {
  Eigen::VectorXd action;  // finite, within [-1, 1]
  PlanBatch plan;          // the chosen plan in every candidate slot
  Plan described;          // without its step and levels
};

// The step just taken, which the scored plans follow: the observation now
// (o_t) and the action applied before it (a_{t-1}; zero at an episode's
// start).
struct LastStep {
  const Eigen::VectorXd& observation;
  const Eigen::VectorXd& action;
};

// PlannerOptions::rollout_model's ensemble, loaded onto `device`. Throws
// std::runtime_error naming the file where it is missing, not an ensemble,
// or learnt for another task, token size or control rate than the
// planner's model.
std::shared_ptr<worldmodel::MlpEnsembleCheckpoint> LoadRolloutModel(
    const std::string& path, const std::string& task, const worldmodel::TokenLayout& layout,
    int action_repeat, const at::Device& device);

class PlanScorer {
 public:
  // `normalizer` on the model's device; `cost` must outlive the scorer.
  // With a `rollout_model` (LoadRolloutModel; null: none) Choose costs each
  // candidate by the ensemble's rollout of its actions, plus
  // `rollout_disagreement` times the members' summed disagreement along it.
  PlanScorer(const worldmodel::TokenLayout& layout, worldmodel::Normalizer normalizer,
             const TaskCost& cost, Selection selection, double temperature,
             std::shared_ptr<worldmodel::MlpEnsembleCheckpoint> rollout_model = nullptr,
             double rollout_disagreement = 0.0);
  ~PlanScorer();

  // Summed task cost [N] of normalized clean plan prefixes [N, n, d] that
  // follow `last` (TaskCost::PlanCosts).
  at::Tensor PrefixCost(const at::Tensor& prefix, const LastStep& last) const;

  // Summed task cost [N] of the observations the rollout model predicts
  // under the actions of normalized clean plan prefixes [N, n, d], from
  // `last` on, plus the disagreement's weight times the members' spread
  // (MlpEnsembleImpl::RolloutWithDisagreement) summed over the rollout.
  at::Tensor RolloutCost(const at::Tensor& prefix, const LastStep& last) const;

  // The candidate to keep: the cheapest (by RolloutCost with a rollout
  // model, else PrefixCost), whose first action is executed (or the MPPI
  // average of the candidates' first actions). A candidate
  // whose cost, action or tokens are not finite is never picked; nullopt
  // when none is left.
  std::optional<Choice> Choose(const PlanBatch& plan, const LastStep& last) const;

 private:
  Plan Describe(const PlanBatch& plan, double cost, const Eigen::VectorXd& observation) const;

  worldmodel::TokenLayout layout_;
  worldmodel::Normalizer normalizer_;
  const TaskCost& cost_;
  Selection selection_;
  double temperature_;
  std::shared_ptr<worldmodel::MlpEnsembleCheckpoint> rollout_model_;
  double rollout_disagreement_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_PLAN_SCORER_H_
