// Scores a step's candidate plans with the task cost, picks the one to keep
// and the action to execute, and describes the kept plan in the
// environment's units (Planner::plan()).
#ifndef DFMPC_PLANNER_SRC_PLAN_SCORER_H_
#define DFMPC_PLANNER_SRC_PLAN_SCORER_H_

#include <ATen/core/Tensor.h>

#include <Eigen/Core>
#include <optional>
#include <vector>

#include "dfmpc/planner/planner.h"
#include "dfmpc/worldmodel/tokens.h"
#include "plan_denoiser.h"

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

class PlanScorer {
 public:
  // `normalizer` on the model's device; `cost` must outlive the scorer.
  PlanScorer(const worldmodel::TokenLayout& layout, worldmodel::Normalizer normalizer,
             const TaskCost& cost, Selection selection, double temperature);

  // Summed task cost [N] of normalized clean plan prefixes [N, n, d] that
  // follow `last` (TaskCost::PlanCosts).
  at::Tensor PrefixCost(const at::Tensor& prefix, const LastStep& last) const;

  // The candidate to keep: the cheapest, whose first action is executed
  // (or the MPPI average of the candidates' first actions). A candidate
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
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_PLAN_SCORER_H_
