// Candidates scored by an ensemble's rollout of their actions
// (PlannerOptions::rollout_model): the task cost of the observations the
// ensemble predicts under each candidate's actions, not of the observations
// the world model sampled beside them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/worldmodel/mlp_ensemble.h"
#include "plan_scorer.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

constexpr int kActions = 1, kObservations = 3;  // the pendulum's

// An ensemble of two untrained MLPs (the test needs a rollout, not a good
// one) with a normalizer that is not the identity, saved as one of `task` at
// `action_repeat`.
std::string ToyEnsemble(const std::string& name, const std::string& task = kPendulum,
                        int action_repeat = 1) {
  worldmodel::MlpDynamicsConfig config;
  config.layout = {kActions, kObservations, false};
  config.width = 16;
  config.hidden_layers = 1;
  worldmodel::MlpEnsemble ensemble(std::vector<worldmodel::MlpDynamics>{
      worldmodel::MlpDynamics(config, 1), worldmodel::MlpDynamics(config, 2)});
  worldmodel::MlpEnsembleInfo info;
  info.model.task = task;
  info.model.config = config;
  info.action_repeat = action_repeat;
  info.seeds = {1, 2};
  const worldmodel::Normalizer normalizer(at::tensor({0.1f, -0.2f, 0.3f, 0.5f}),
                                          at::tensor({0.5f, 1.5f, 2.0f, 4.0f}));
  const std::string path = ::testing::TempDir() + "/dfmpc_rollout_scoring_" + name + ".pt";
  worldmodel::SaveMlpEnsemble(path, info, normalizer, *ensemble);
  return path;
}

const std::string& Ensemble() {
  static const std::string path = ToyEnsemble("pendulum");
  return path;
}

// The task cost of each candidate's actions [N, n, act] rolled out step by
// step through the ensemble's mean (MlpEnsembleImpl::Forward), from
// observation o after action a.
at::Tensor CostOfRollouts(worldmodel::MlpEnsembleCheckpoint& model, const TaskCost& cost,
                          const at::Tensor& actions, const at::Tensor& o, const at::Tensor& a) {
  const worldmodel::Normalizer& normalizer = model.normalizer;
  const int64_t candidates = actions.size(0), steps = actions.size(1);
  std::vector<at::Tensor> observations;
  for (int64_t i = 0; i < candidates; ++i) {
    at::Tensor token = normalizer.Normalize(at::cat({a, o})).unsqueeze(0);
    std::vector<at::Tensor> path;
    for (int64_t s = 0; s < steps; ++s) {
      const at::Tensor action = ((actions[i][s] - normalizer.mean().narrow(0, 0, kActions)) /
                                 normalizer.scale().narrow(0, 0, kActions))
                                    .unsqueeze(0);
      token = at::cat({action, model.ensemble->Forward(token, action)}, -1);
      path.push_back(normalizer.Denormalize(token)[0].narrow(0, kActions, kObservations));
    }
    observations.push_back(at::stack(path));
  }
  return cost.PlanCosts(at::stack(observations), actions, o, a).sum(1);
}

// What a PlanScorer of the shipped pendulum model is built from, with the
// toy ensemble as its rollout model.
struct PendulumScoring {
  // Costs the ensemble's rollouts, plus `disagreement` times its members'
  // spread along them.
  PlanScorer Rollouts(double disagreement = 0.0) const {
    return PlanScorer(model.info.layout, model.normalizer, *cost, Selection::kBest, 1.0, ensemble,
                      disagreement);
  }
  // Costs the candidates' own sampled observations.
  PlanScorer Sampled() const {
    return PlanScorer(model.info.layout, model.normalizer, *cost, Selection::kBest, 1.0);
  }

  const worldmodel::Checkpoint& model = Pendulum();
  const worldmodel::TokenLayout& layout = model.info.layout;
  std::unique_ptr<TaskCost> cost = MakeTaskCost(kPendulum);
  std::shared_ptr<worldmodel::MlpEnsembleCheckpoint> ensemble =
      LoadRolloutModel(Ensemble(), kPendulum, layout, 1, at::kCPU);
};

TEST(RolloutScoringTest, ChoosesTheCheapestRolloutOfTheCandidatesActions) {
  at::NoGradGuard no_grad;
  const PendulumScoring scoring;
  const worldmodel::TokenLayout& layout = scoring.layout;
  const PlanScorer scorer = scoring.Rollouts();
  const PlanScorer plain = scoring.Sampled();

  at::manual_seed(3);
  PlanBatch plan;
  plan.tokens = at::randn({6, 8, layout.token_dim()});
  plan.clean_estimate = at::randn({6, 8, layout.token_dim()});
  plan.estimated = 5;  // the rollout covers the estimated tokens alone
  const Eigen::VectorXd observation = Eigen::Vector3d(0.6, -0.8, 1.5);
  const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, -0.4);
  const LastStep last{observation, action};

  // The plans' actions as executed: denormalized and within [-1, 1].
  const at::Tensor actions =
      scoring.model.normalizer.Denormalize(plan.clean_estimate.narrow(1, 0, 5))
          .narrow(-1, 0, kActions)
          .clamp(-1.0, 1.0);
  const at::Tensor o = at::tensor({0.6f, -0.8f, 1.5f}), a = at::tensor({-0.4f});
  const at::Tensor expected = CostOfRollouts(*scoring.ensemble, *scoring.cost, actions, o, a);
  // Float rollouts of 5 steps through the same weights, batched or one by
  // one: equal up to the products' summation order.
  EXPECT_TRUE(at::allclose(scorer.RolloutCost(plan.clean_estimate.narrow(1, 0, 5), last), expected,
                           1e-4, 1e-4));

  const std::optional<Choice> choice = scorer.Choose(plan, last);
  ASSERT_TRUE(choice.has_value());
  const int64_t best = expected.argmin().item<int64_t>();
  EXPECT_TRUE(at::equal(choice->plan.tokens[0], plan.tokens[best]));
  EXPECT_NEAR(choice->described.cost, expected[best].item<double>(),
              1e-4 * std::abs(expected[best].item<double>()));
  // Without the rollout model the same candidates are costed by their own
  // sampled observations, which these random tokens make another cost.
  const std::optional<Choice> sampled = plain.Choose(plan, last);
  ASSERT_TRUE(sampled.has_value());
  EXPECT_GT(std::abs(sampled->described.cost - choice->described.cost), 1e-3);
}

TEST(RolloutScoringTest, DisagreementWeighsTheMembersSpreadIntoTheCost) {
  at::NoGradGuard no_grad;
  const PendulumScoring scoring;
  const worldmodel::TokenLayout& layout = scoring.layout;
  const PlanScorer plain = scoring.Rollouts(), half = scoring.Rollouts(0.5),
                   one = scoring.Rollouts(1.0), cautious = scoring.Rollouts(1e6);

  at::manual_seed(4);
  PlanBatch plan;
  plan.tokens = at::randn({6, 8, layout.token_dim()});
  plan.clean_estimate = at::randn({6, 8, layout.token_dim()});
  plan.estimated = 8;
  const Eigen::VectorXd observation = Eigen::Vector3d(-0.2, 0.9, -1.0);
  const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, 0.3);
  const LastStep last{observation, action};

  // The added cost is the weight times one positive spread per candidate.
  const at::Tensor base = plain.RolloutCost(plan.clean_estimate, last);
  const at::Tensor spread = (one.RolloutCost(plan.clean_estimate, last) - base);
  EXPECT_TRUE((spread > 1e-4).all().item<bool>()) << spread;  // two seeds' members disagree
  EXPECT_GT((spread.max() - spread.min()).item<double>(), 1e-4) << spread;
  EXPECT_TRUE(
      at::allclose(half.RolloutCost(plan.clean_estimate, last) - base, 0.5 * spread, 1e-4, 1e-4));
  // Weighed enough, it decides: the candidate the members agree on most.
  const std::optional<Choice> choice = cautious.Choose(plan, last);
  ASSERT_TRUE(choice.has_value());
  EXPECT_TRUE(at::equal(choice->plan.tokens[0], plan.tokens[spread.argmin().item<int64_t>()]));
}

TEST(RolloutScoringTest, PlannerScoresByTheRolloutModelOfItsOptions) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.candidates = 4;
  options.rollout_model = Ensemble();
  const Trajectory trajectory = Drive(*MakePlanner(options), 5, 7);
  for (const Eigen::VectorXd& action : trajectory.actions) {
    EXPECT_TRUE(action.allFinite());
    EXPECT_LE(action.cwiseAbs().maxCoeff(), 1.0);
  }
  // Another planner with the same seed but its own candidates' observations
  // keeps other plans.
  options.rollout_model.clear();
  const Trajectory own = Drive(*MakePlanner(options), 5, 7);
  double difference = 0.0;
  for (size_t s = 0; s < own.actions.size(); ++s) {
    difference += (own.actions[s] - trajectory.actions[s]).cwiseAbs().sum();
  }
  EXPECT_GT(difference, 1e-4);
}

void ExpectRefused(const std::string& rollout_model, const std::string& needle) {
  PlannerOptions options = Small(PlanMode::kWarm);
  options.rollout_model = rollout_model;
  try {
    MakePlanner(options);
    ADD_FAILURE() << "no error for " << rollout_model;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RolloutScoringTest, WrongRolloutModelsAreRefused) {
  ExpectRefused(ToyEnsemble("reacher", "reacher"),
                "trained for task 'reacher', not 'pendulum_swingup'");
  ExpectRefused(ToyEnsemble("repeat4", kPendulum, 4),
                "rollout model learnt at 4 physics step(s) per control step, the planner's "
                "model at 1");
  ExpectRefused(ModelPath(kPendulum), "not an MLP dynamics ensemble");
  ExpectRefused(::testing::TempDir() + "/dfmpc_rollout_scoring_missing.pt", "does not exist");
}

}  // namespace
}  // namespace dfmpc::planner
