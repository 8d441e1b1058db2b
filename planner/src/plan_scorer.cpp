#include "plan_scorer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"

namespace dfmpc::planner {
namespace {

// Rows x cols float tensor (on any device) as an Eigen matrix.
Eigen::MatrixXd ToEigen(const at::Tensor& matrix) {
  const at::Tensor cpu = matrix.to(at::kCPU, at::kDouble).contiguous();
  Eigen::MatrixXd out(cpu.size(0), cpu.size(1));
  const double* data = cpu.data_ptr<double>();
  for (int64_t r = 0; r < cpu.size(0); ++r) {
    for (int64_t c = 0; c < cpu.size(1); ++c) out(r, c) = data[r * cpu.size(1) + c];
  }
  return out;
}

at::Tensor ToTensor(const Eigen::VectorXd& v, const at::Device& device) {
  return worldmodel::ToDevice(
      at::tensor(std::vector<double>(v.data(), v.data() + v.size()), at::kDouble), device,
      at::kFloat);
}

}  // namespace

std::shared_ptr<worldmodel::MlpEnsembleCheckpoint> LoadRolloutModel(
    const std::string& path, const std::string& task, const worldmodel::TokenLayout& layout,
    int action_repeat, const at::Device& device) {
  auto model = std::make_shared<worldmodel::MlpEnsembleCheckpoint>(
      worldmodel::LoadMlpEnsemble(path, {task, 0}));
  const worldmodel::TokenLayout& own = model->info.model.config.layout;
  if (own.action_dim != layout.action_dim || own.observation_dim != layout.observation_dim) {
    throw std::runtime_error("checkpoint " + path +
                             ": the rollout model's actions and observations are not the "
                             "planner's model's");
  }
  if (model->info.action_repeat != action_repeat) {
    throw std::runtime_error("checkpoint " + path + ": rollout model learnt at " +
                             std::to_string(model->info.action_repeat) +
                             " physics step(s) per control step, the planner's model at " +
                             std::to_string(action_repeat));
  }
  model->ensemble->to(device);
  model->normalizer = model->normalizer.To(device);
  return model;
}

PlanScorer::PlanScorer(const worldmodel::TokenLayout& layout, worldmodel::Normalizer normalizer,
                       const TaskCost& cost, Selection selection, double temperature,
                       std::shared_ptr<worldmodel::MlpEnsembleCheckpoint> rollout_model,
                       double rollout_disagreement)
    : layout_(layout),
      normalizer_(std::move(normalizer)),
      cost_(cost),
      selection_(selection),
      temperature_(temperature),
      rollout_model_(std::move(rollout_model)),
      rollout_disagreement_(rollout_disagreement) {}

PlanScorer::~PlanScorer() = default;

at::Tensor PlanScorer::PrefixCost(const at::Tensor& prefix, const LastStep& last) const {
  const at::Tensor tokens = normalizer_.Denormalize(prefix);
  const at::Tensor observation = ToTensor(last.observation, prefix.device());
  const at::Tensor observations = worldmodel::TokenObservations(
      layout_, tokens, observation.expand({prefix.size(0), layout_.observation_dim}));
  const at::Tensor actions = tokens.narrow(-1, 0, layout_.action_dim);
  return cost_.PlanCosts(observations, actions, observation, ToTensor(last.action, prefix.device()))
      .sum(1);
}

at::Tensor PlanScorer::RolloutCost(const at::Tensor& prefix, const LastStep& last) const {
  const worldmodel::Normalizer& own = rollout_model_->normalizer;
  const int64_t act = layout_.action_dim;
  // The plans' actions as the environment would apply them.
  const at::Tensor actions = normalizer_.Denormalize(prefix).narrow(-1, 0, act).clamp(-1.0, 1.0);
  const at::Tensor observation = ToTensor(last.observation, prefix.device());
  const at::Tensor action = ToTensor(last.action, prefix.device());
  const at::Tensor token =
      own.Normalize(at::cat({action, observation})).unsqueeze(0).expand({prefix.size(0), -1});
  const at::Tensor own_actions =
      (actions - own.mean().narrow(0, 0, act)) / own.scale().narrow(0, 0, act);
  const worldmodel::MlpEnsembleImpl::PenalizedRollout rollout =
      rollout_model_->ensemble->RolloutPenalizingDisagreement(token, own_actions,
                                                              rollout_disagreement_);
  const at::Tensor observations =
      own.Denormalize(rollout.tokens).narrow(-1, act, layout_.observation_dim);
  return cost_.PlanCosts(observations, actions, observation, action).sum(1) + rollout.penalty;
}

std::optional<Choice> PlanScorer::Choose(const PlanBatch& plan, const LastStep& last) const {
  const int estimated = std::max(1, plan.estimated);
  const at::Tensor prefix = plan.clean_estimate.narrow(1, 0, estimated);
  const at::Tensor costs = rollout_model_ ? RolloutCost(prefix, last) : PrefixCost(prefix, last);
  const at::Tensor first_actions = normalizer_.Denormalize(plan.tokens.select(1, 0))
                                       .narrow(-1, 0, layout_.action_dim);  // [N, act]
  const at::Tensor valid = at::isfinite(costs) & at::isfinite(first_actions).all(1) &
                           at::isfinite(plan.tokens).flatten(1).all(1);
  const at::Tensor finite_costs =
      at::where(valid, costs, at::full_like(costs, std::numeric_limits<float>::infinity()));
  // The choice stays on the device until one read-back of what the host
  // needs: [any valid, best, its cost, the action]. (On a GPU every read
  // back waits for the queued kernels.)
  const at::Tensor best = finite_costs.argmin().view({1});
  at::Tensor action = first_actions.index_select(0, best)[0];
  if (selection_ == Selection::kMppi) {
    // Invalid candidates get weight exp(-inf) = 0 and a zero action.
    const at::Tensor weights =
        at::softmax(-(finite_costs - finite_costs.index_select(0, best)) / temperature_, 0);
    const at::Tensor actions =
        at::where(valid.unsqueeze(1), first_actions, at::zeros_like(first_actions));
    action = (weights.unsqueeze(1) * actions).sum(0);
  }
  const at::Tensor read_back =
      at::cat({valid.any().to(at::kFloat).view({1}), best.to(at::kFloat),
               finite_costs.index_select(0, best), action.clamp(-1.0, 1.0).to(at::kFloat)})
          .to(at::kCPU, at::kDouble);
  const double* host = read_back.data_ptr<double>();
  if (host[0] == 0.0) return std::nullopt;
  const int64_t chosen = static_cast<int64_t>(host[1]);
  Choice choice;
  choice.action = Eigen::Map<const Eigen::VectorXd>(host + 3, layout_.action_dim);
  if (!choice.action.allFinite()) return std::nullopt;
  choice.plan.tokens = plan.tokens.narrow(0, chosen, 1).expand_as(plan.tokens).clone();
  choice.plan.clean_estimate =
      plan.clean_estimate.narrow(0, chosen, 1).expand_as(plan.clean_estimate).clone();
  choice.plan.estimated = plan.estimated;
  choice.described = Describe(choice.plan, host[2], last.observation);
  return choice;
}

Plan PlanScorer::Describe(const PlanBatch& plan, double cost,
                          const Eigen::VectorXd& observation) const {
  const at::Tensor estimate = normalizer_.Denormalize(plan.clean_estimate[0]);
  const at::Tensor observations =
      worldmodel::TokenObservations(layout_, estimate, ToTensor(observation, plan.tokens.device()));
  // One read-back: [actions, observations, normalized tokens] per row.
  const Eigen::MatrixXd rows = ToEigen(
      at::cat({estimate.narrow(-1, 0, layout_.action_dim), observations, plan.tokens[0]}, -1));
  const int actions = layout_.action_dim, features = layout_.observation_dim;
  Plan out;
  out.actions = rows.leftCols(actions);
  out.observations = rows.middleCols(actions, features);
  // Tokens never run through the model have no estimate yet.
  const int unknown = static_cast<int>(plan.tokens.size(1)) - plan.estimated;
  if (unknown > 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.actions.bottomRows(unknown).setConstant(nan);
    out.observations.bottomRows(unknown).setConstant(nan);
  }
  out.tokens = rows.rightCols(rows.cols() - actions - features);
  out.cost = cost;
  return out;
}

}  // namespace dfmpc::planner
