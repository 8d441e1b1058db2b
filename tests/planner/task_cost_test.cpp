#include "dfmpc/planner/task_cost.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dfmpc/task/task_spec.h"

namespace dfmpc::planner {
namespace {

// A single step [1, 1, D] from its components.
at::Tensor Step(const std::vector<double>& values) {
  return torch::tensor(values, torch::kDouble).view({1, 1, -1});
}

double Cost(const std::string& task, const std::vector<double>& observation,
            const std::vector<double>& action) {
  return MakeTaskCost(task)->StepCosts(Step(observation), Step(action)).item<double>();
}

class TaskCostTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cost_ = MakeTaskCost(GetParam());
    torch::manual_seed(0);
  }
  // Random plans well off the training distribution: (cos, sin) pairs off
  // the unit circle, velocities and actions out of bounds.
  at::Tensor Observations(int64_t batch, int64_t horizon) const {
    return 3.0 * torch::randn({batch, horizon, cost_->observation_dim()});
  }
  at::Tensor Actions(int64_t batch, int64_t horizon) const {
    return 3.0 * torch::randn({batch, horizon, cost_->action_dim()});
  }
  std::unique_ptr<TaskCost> cost_;
};

TEST_P(TaskCostTest, KeepsItsName) { EXPECT_EQ(cost_->task(), GetParam()); }

TEST_P(TaskCostTest, StepCostsAreFiniteNonNegativeWithShapeBH) {
  const at::Tensor costs = cost_->StepCosts(Observations(2, 3), Actions(2, 3));
  ASSERT_EQ(costs.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(costs.isfinite().all().item<bool>()) << costs;
  EXPECT_TRUE((costs >= 0).all().item<bool>()) << costs;
}

TEST_P(TaskCostTest, GradientsReachObservationsAndActions) {
  const at::Tensor observations = Observations(2, 3).requires_grad_();
  const at::Tensor actions = Actions(2, 3).requires_grad_();
  cost_->StepCosts(observations, actions).sum().backward();
  for (const at::Tensor& grad : {observations.grad(), actions.grad()}) {
    ASSERT_TRUE(grad.defined());
    EXPECT_TRUE(grad.isfinite().all().item<bool>()) << grad;
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0);
  }
}

TEST_P(TaskCostTest, LargerActionsCostMore) {
  const at::Tensor observations = Observations(2, 3);
  const at::Tensor still =
      cost_->StepCosts(observations, torch::zeros({2, 3, cost_->action_dim()}));
  const at::Tensor pushing =
      cost_->StepCosts(observations, torch::ones({2, 3, cost_->action_dim()}));
  EXPECT_TRUE((pushing > still).all().item<bool>()) << still << pushing;
}

TEST_P(TaskCostTest, RejectsWrongShapesAndTypes) {
  const int64_t obs_dim = cost_->observation_dim();
  const int64_t act_dim = cost_->action_dim();
  const at::Tensor observations = Observations(2, 3);
  const at::Tensor actions = Actions(2, 3);
  EXPECT_NO_THROW(cost_->StepCosts(observations, actions));
  EXPECT_NO_THROW(cost_->StepCosts(observations.to(torch::kDouble), actions));

  struct BadCase {
    const char* what;
    at::Tensor observations;
    at::Tensor actions;
  };
  const std::vector<BadCase> cases = {
      {"observation dim", torch::zeros({2, 3, obs_dim + 1}), actions},
      {"action dim", observations, torch::zeros({2, 3, act_dim + 1})},
      {"batch", observations, torch::zeros({1, 3, act_dim})},
      {"horizon", observations, torch::zeros({2, 4, act_dim})},
      {"2-d", torch::zeros({3, obs_dim}), torch::zeros({3, act_dim})},
      {"2-d actions", observations, torch::zeros({3, act_dim})},
      {"integer observations", observations.to(torch::kLong), actions},
      {"integer actions", observations, actions.to(torch::kInt)},
      {"undefined observations", at::Tensor(), actions},
      {"undefined actions", observations, at::Tensor()},
  };
  for (const BadCase& bad : cases) {
    EXPECT_THROW(cost_->StepCosts(bad.observations, bad.actions), std::invalid_argument)
        << bad.what;
  }
}

TEST_P(TaskCostTest, ErrorNamesTaskArgumentAndShapes) {
  try {
    cost_->StepCosts(Observations(2, 3), torch::zeros({2, 3, cost_->action_dim() + 1}));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(GetParam()), std::string::npos) << message;
    EXPECT_NE(message.find("actions"), std::string::npos) << message;
    EXPECT_NE(message.find(c10::str("[2, 3, ", cost_->action_dim() + 1, "]")), std::string::npos)
        << message;
    EXPECT_NE(message.find(c10::str(cost_->action_dim(), "]")), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTasks, TaskCostTest,
                         testing::Values("pendulum_swingup", "cartpole_swingup", "cartpole_balance",
                                         "reacher", "pointmass_maze", "pendulum_swingup_novel"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(MakeTaskCostTest, RejectsUnknownTask) {
  EXPECT_THROW(MakeTaskCost("pendulum"), std::invalid_argument);
  EXPECT_THROW(MakeTaskCost(""), std::invalid_argument);
}

TEST(PendulumCostTest, UprightAtRestIsFreeAndHangingAtRestIsNot) {
  EXPECT_LT(Cost("pendulum_swingup", {1, 0, 0}, {0}), 0.01);
  EXPECT_GT(Cost("pendulum_swingup", {-1, 0, 0}, {0}), 0.9);
}

TEST(PendulumCostTest, SwingingWithEnoughEnergyBeatsHangingStill) {
  // 0.5 * 0.25 * w^2 - 9.81 * 0.5 = 9.81 * 0.5: just enough to reach the top.
  const double w = std::sqrt(8.0 * 9.81);
  const double swinging = Cost("pendulum_swingup", {-1, 0, w}, {0});
  EXPECT_LT(swinging, Cost("pendulum_swingup", {-1, 0, 0}, {0}) - 0.2);
  // A surplus costs half of what the same shortfall costs: a damped
  // pendulum needs some at the bottom to arrive at the top. sqrt(2) times
  // the speed doubles the kinetic energy: a surplus of the whole
  // bottom-to-top gap.
  const double surplus = Cost("pendulum_swingup", {-1, 0, std::sqrt(2.0) * w}, {0});
  EXPECT_NEAR(surplus - swinging, 0.5 * 0.5, 1e-5);
  EXPECT_NEAR(Cost("pendulum_swingup", {-1, 0, 0}, {0}) - swinging, 0.5, 1e-5);
}

TEST(PendulumCostTest, AnEnergyShortfallCostsInProportion) {
  // At rest 30 degrees short of upright the pendulum lacks (1 - cos 30) / 2
  // = 6.7% of the bottom-to-top energy: half of that is its energy cost, on
  // top of the upright term (1 - cos 30) / 4. A squared shortfall would add
  // only 0.002, too little to rank the plans that pump above those that do
  // not.
  const double c = std::cos(M_PI / 6.0), s = std::sin(M_PI / 6.0);
  const double upright = (1.0 - c) / 4.0;
  EXPECT_NEAR(Cost("pendulum_swingup", {c, s, 0}, {0}) - upright, (1.0 - c) / 4.0, 1e-5);
  // The same at 60 degrees, with 3.7 times the shortfall.
  const double c2 = std::cos(M_PI / 3.0), s2 = std::sin(M_PI / 3.0);
  EXPECT_NEAR(Cost("pendulum_swingup", {c2, s2, 0}, {0}) - (1.0 - c2) / 4.0, (1.0 - c2) / 4.0,
              1e-5);
}

// A plan of `steps` pendulum states turning at `velocity` rad/s from
// `angle`, 0.02 s apart: [1, steps, 2] (cos, sin) or, with a velocity
// feature `observed`, [1, steps, 3].
at::Tensor TurningPendulum(double angle, double velocity, int steps,
                           std::optional<double> observed = std::nullopt) {
  std::vector<double> values;
  for (int t = 0; t < steps; ++t) {
    const double at = angle + velocity * 0.02 * t;
    values.insert(values.end(), {std::cos(at), std::sin(at)});
    if (observed) values.push_back(*observed);
  }
  return torch::tensor(values, torch::kDouble).view({1, steps, -1});
}

double Total(const TaskCost& cost, const at::Tensor& observations) {
  const at::Tensor actions = torch::zeros({1, observations.size(1), 1}, torch::kDouble);
  return cost.StepCosts(observations, actions).sum().item<double>();
}

double Total(const std::string& task, const at::Tensor& observations) {
  return Total(*MakeTaskCost(task), observations);
}

// The pendulum's cost with its energy term's surplus charged at the novel
// pendulum's rate: the pendulum's task file charges half a shortfall's
// price since it samples at K = 8 levels, the novel pendulum's a quarter.
std::unique_ptr<TaskCost> PendulumCostAtNovelSurplusRate() {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  std::string text = pendulum.toml_text;
  const std::string rate = "max(-gap, 0.5 * gap)";
  const std::size_t at = text.find(rate);
  if (at == std::string::npos) throw std::logic_error("the pendulum's task file changed its rate");
  text.replace(at, rate.size(), "max(-gap, 0.25 * gap)");
  return MakeTaskCost(task::ParseTaskSpec(text, pendulum.mjcf_text, "pendulum, rate 0.25"));
}

// pendulum_swingup_novel observes no velocity: its cost is the pendulum's at
// the velocity estimated between plan steps, sin(w dt) / dt for a plan
// turning at w (within 0.6% of w up to the pendulum's top speed), where the
// plan follows the step just taken (PlanCosts, as planners score it). The
// smoothing epsilon 1e-6 under the estimate's norm scales it by 1 - 5e-7:
// a 1e-5 tolerance on the summed cost.
TEST(PendulumNovelCostTest, IsThePendulumCostAtTheEstimatedVelocity) {
  const std::unique_ptr<TaskCost> pendulum = PendulumCostAtNovelSurplusRate();
  const std::unique_ptr<TaskCost> novel = MakeTaskCost("pendulum_swingup_novel");
  const at::Tensor action = torch::zeros({1}, torch::kDouble);
  const at::Tensor actions = torch::zeros({1, 4, 1}, torch::kDouble);
  for (const double w : {0.0, 3.0, -8.0}) {
    const double estimate = std::sin(w * 0.02) / 0.02;
    const double before = 2.5 - w * 0.02;
    const at::Tensor now = torch::tensor({std::cos(before), std::sin(before)}, torch::kDouble);
    const at::Tensor observed_now =
        torch::tensor({std::cos(before), std::sin(before), estimate}, torch::kDouble);
    EXPECT_NEAR(
        novel->PlanCosts(TurningPendulum(2.5, w, 4), actions, now, action).sum().item<double>(),
        pendulum->PlanCosts(TurningPendulum(2.5, w, 4, estimate), actions, observed_now, action)
            .sum()
            .item<double>(),
        1e-5)
        << w;
  }
  // A sequence's first step has none before it to estimate from: 0.
  EXPECT_NEAR(Total("pendulum_swingup_novel", TurningPendulum(2.5, 5.0, 1)),
              Total(*pendulum, TurningPendulum(2.5, 5.0, 1, 0.0)), 1e-12);
}

TEST(PendulumNovelCostTest, SwingingThroughTheBottomBeatsHangingStill) {
  const double w = std::sqrt(8.0 * 9.81);  // just enough energy for the top
  const double swinging = Total("pendulum_swingup_novel", TurningPendulum(3.1, w, 2));
  const double hanging = Total("pendulum_swingup_novel", TurningPendulum(3.1, 0.0, 2));
  EXPECT_GT(hanging, 1.8);  // two steps of about 1
  EXPECT_LT(swinging, hanging - 0.4);
}

TEST(CartpoleCostTest, PrefersUprightThenCentered) {
  for (const std::string task : {"cartpole_swingup", "cartpole_balance"}) {
    const double centered = Cost(task, {0, 1, 0, 0, 0}, {0});
    const double off_center = Cost(task, {1.5, 1, 0, 0, 0}, {0});
    const double hanging = Cost(task, {0, -1, 0, 0, 0}, {0});
    EXPECT_LT(centered, 0.01) << task;
    EXPECT_LT(centered, off_center) << task;
    EXPECT_LT(off_center, hanging) << task;
  }
}

TEST(ReacherCostTest, GrowsWithDistanceToTarget) {
  const double at_target = Cost("reacher", {1, 0, 1, 0, 0, 0, 0, 0}, {0, 0});
  const double near = Cost("reacher", {1, 0, 1, 0, 0.1, 0, 0, 0}, {0, 0});
  const double far = Cost("reacher", {1, 0, 1, 0, 0, -0.3, 0, 0}, {0, 0});
  EXPECT_LT(at_target, 0.01);
  EXPECT_LT(at_target, near);
  EXPECT_LT(near, far);
}

TEST(ReacherCostTest, GradientPointsAwayFromTarget) {
  const at::Tensor observations = Step({1, 0, 1, 0, 0.1, -0.05, 0, 0}).requires_grad_();
  MakeTaskCost("reacher")->StepCosts(observations, Step({0, 0})).sum().backward();
  const at::Tensor grad = observations.grad().view({-1});
  EXPECT_GT(grad[4].item<double>(), 0.0);  // dx > 0: cost grows with dx
  EXPECT_LT(grad[5].item<double>(), 0.0);  // dy < 0: cost shrinks as dy grows
}

TEST(PointmassMazeCostTest, AtGoalBeatsOneMetreAway) {
  const double at_goal = Cost("pointmass_maze", {-1, 1, 0, 0, -1, 1}, {0, 0});
  const double away = Cost("pointmass_maze", {0, 1, 0, 0, -1, 1}, {0, 0});
  EXPECT_LT(at_goal, 0.01);
  EXPECT_LT(at_goal, away);
}

// The cost is the path distance around the wall: it falls all along the
// detour from the start to the goal, and the dead end below the goal (1.6 m
// from it in a straight line) costs more than the passage (2.2 m).
TEST(PointmassMazeCostTest, FallsAlongTheDetourAroundTheWall) {
  const std::vector<std::pair<double, double>> path = {
      {-1, -1}, {0, -1}, {1, -1}, {1, 0}, {1, 1}, {0, 1}, {-1, 1}};
  double previous = std::numeric_limits<double>::infinity();
  for (const auto& [x, y] : path) {
    const double cost = Cost("pointmass_maze", {x, y, 0, 0, -1, 1}, {0, 0});
    EXPECT_LT(cost, previous) << "at (" << x << ", " << y << ")";
    previous = cost;
  }
  EXPECT_GT(Cost("pointmass_maze", {-1, -0.6, 0, 0, -1, 1}, {0, 0}),
            Cost("pointmass_maze", {1, 0, 0, 0, -1, 1}, {0, 0}));
}

}  // namespace
}  // namespace dfmpc::planner
