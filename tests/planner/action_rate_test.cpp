// Smoothness (issue 31): plans are scored after the step just taken, so an
// action_rate term charges a plan's first action for its change from the
// action the actuator holds, and the planner's actions chatter less.
#include <gtest/gtest.h>
#include <torch/types.h>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "shipped_pendulum.h"

namespace dfmpc::planner {
namespace {

// The pendulum's task with an action_rate term of `weight` added.
task::TaskSpec PendulumWithActionRate(double weight) {
  const task::TaskSpec pendulum = task::LoadTaskSpec(kPendulum);
  std::string toml = pendulum.toml_text;
  toml.insert(toml.find("[planner]"),
              "[[cost]]\nterm = \"action_rate\"\nweight = " + std::to_string(weight) + "\n\n");
  return task::ParseTaskSpec(toml, pendulum.mjcf_text, "test/task.toml");
}

TEST(ActionRateTest, PlanCostsChargeTheFirstActionsChangeFromTheLastOne) {
  const std::unique_ptr<TaskCost> cost = MakeTaskCost(PendulumWithActionRate(2.0));
  const std::unique_ptr<TaskCost> plain = MakeTaskCost(kPendulum);
  const at::Tensor observations = torch::tensor({1.0, 0.0, 0.0, 1.0, 0.0, 0.0}).view({1, 2, 3});
  const at::Tensor actions = torch::tensor({0.5, 0.5}).view({1, 2, 1});
  const at::Tensor observation = torch::tensor({1.0, 0.0, 0.0});
  const at::Tensor held = torch::tensor({-0.5});
  // Within the plan the action does not change; from the held one it does by 1.
  const at::Tensor within =
      cost->StepCosts(observations, actions) - plain->StepCosts(observations, actions);
  const at::Tensor after = cost->PlanCosts(observations, actions, observation, held) -
                           plain->PlanCosts(observations, actions, observation, held);
  EXPECT_NEAR(within[0][0].item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(after[0][0].item<double>(), 2.0, 1e-6);
  EXPECT_NEAR(after[0][1].item<double>(), 0.0, 1e-6);
  // A cost without terms across steps is the same either way.
  EXPECT_TRUE(plain->PlanCosts(observations, actions, observation, held)
                  .allclose(plain->StepCosts(observations, actions)));
  EXPECT_THROW(cost->PlanCosts(observations, actions, torch::zeros({2}), held),
               std::invalid_argument);
  EXPECT_THROW(cost->PlanCosts(observations, actions, observation, torch::zeros({2})),
               std::invalid_argument);
}

TEST(ActionRateTest, TheTermLowersTheChattersOfTheChosenActions) {
#if defined(__SANITIZE_ADDRESS__)
  // Numbers, not memory: 400 steps at the tuned options; the code path is
  // PlannerTest's.
  GTEST_SKIP() << "checked in the Release build";
#endif
  // The tuned options with the cheapest candidate kept: the term acts
  // through that choice among 8 candidates (the MPPI average smooths too).
  PlannerOptions options = TunedPlannerOptions(kPendulum);
  options.selection = Selection::kBest;
  options.action_window = 1;  // the window smooths too (action_window_test.cpp)
  double change[2];
  for (int smooth = 0; smooth < 2; ++smooth) {
    Planner planner(Pendulum(),
                    smooth ? MakeTaskCost(PendulumWithActionRate(1.0)) : MakeTaskCost(kPendulum),
                    options);
    change[smooth] = MeanActionChange(Drive(planner, 200, /*seed=*/3));
  }
  EXPECT_LT(change[1], 0.8 * change[0]) << "without: " << change[0] << ", with: " << change[1];
  std::cout << "mean |da| without the term " << change[0] << ", with it " << change[1] << "\n";
}

}  // namespace
}  // namespace dfmpc::planner
