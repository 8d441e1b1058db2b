// Rewards, shaped rewards and success tests written as formulas
// (`expression = "..."`) equal the factor tables they can replace, read
// unobserved sensors through [[quantity]] tables, and are refused, naming
// the file and key, when they do not parse or are not finite.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "dfmpc/envs/env.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {
namespace {

// `task`'s file with the text from `begin` up to (not including) `end`
// replaced by `tables`.
task::TaskSpec Edited(const std::string& task, const std::string& begin, const std::string& end,
                      const std::string& tables) {
  const task::TaskSpec spec = task::LoadTaskSpec(task);
  std::string toml = spec.toml_text;
  const size_t from = toml.find(begin), to = toml.find(end, from);
  EXPECT_NE(from, std::string::npos) << begin;
  EXPECT_NE(to, std::string::npos) << end;
  toml.replace(from, to - from, tables + "\n");
  return task::ParseTaskSpec(toml, spec.mjcf_text, "arm/task.toml");
}

// dm_control's cart-pole reward, the product of its four factors.
constexpr char kCartpoleReward[] =
    "[reward]\n"
    "expression = \"\"\"\n"
    "upright = 0.5 + 0.5 * cos,\n"
    "centered = 0.5 + 0.5 * tolerance(x, 0, 0, 2, sigmoid.gaussian, 0.1),\n"
    "small_control = 0.8 + 0.2 * tolerance(action.slide, 0, 0, 1, sigmoid.quadratic, 0),\n"
    "small_velocity = 0.5 + 0.5 * tolerance(pole_velocity, 0, 0, 5, sigmoid.gaussian, 0.1),\n"
    "upright * centered * small_control * small_velocity\n"
    "\"\"\"\n";

TEST(RewardFormulaTest, TheCartpolesRewardAsAFormulaIsItsFactors) {
  const auto factors = MakeEnv("cartpole_swingup");
  const auto formula =
      MakeEnv(Edited("cartpole_swingup", "[[reward.factor]]", "[[cost]]", kCartpoleReward));
  factors->Reset(3);
  formula->Reset(3);
  for (int t = 0; t < 300; ++t) {
    const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, std::sin(0.05 * t));
    const double expected = factors->Step(action).reward;
    ASSERT_NEAR(formula->Step(action).reward, expected, 1e-12) << "step " << t;
    ASSERT_NEAR(formula->ShapedReward(), factors->ShapedReward(), 1e-12) << "step " << t;
  }
}

// The novel pendulum observes no velocity; its shaped reward reads the
// hinge's velocity sensor all the same, named in a [[quantity]] table.
TEST(RewardFormulaTest, AQuantityReadsASensorThatIsNotObserved) {
  const auto factors = MakeEnv("pendulum_swingup_novel");
  const auto formula =
      MakeEnv(Edited("pendulum_swingup_novel", "[[shaped_reward.factor]]", "[[cost]]",
                     "[[quantity]]\nname = \"hinge_speed\"\nsensor = \"hinge_velocity\"\n"
                     "[shaped_reward]\nexpression = \"(0.5 + 0.5 * cos) * "
                     "(0.8 + 0.2 * tolerance(hinge_speed, 0, 0, 8, sigmoid.quadratic, 0))\""));
  factors->Reset(1);
  formula->Reset(1);
  for (int t = 0; t < 200; ++t) {
    const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, t % 40 < 20 ? 1.0 : -1.0);
    factors->Step(action);
    formula->Step(action);
    ASSERT_NEAR(formula->ShapedReward(), factors->ShapedReward(), 1e-12) << "step " << t;
  }
}

// The maze's success as a comparison, and its reward reading `success`
// (itself a formula) among features.
TEST(RewardFormulaTest, SuccessIsAFormulaThatHolds) {
  const auto factors = MakeEnv("pointmass_maze");
  const auto formula =
      MakeEnv(Edited("pointmass_maze", "[success]", "[[shaped_reward.factor]]",
                     "[success]\nexpression = \"sqrt((x - goal_x)^2 + (y - goal_y)^2) < 0.5\"\n"
                     "[reward]\nexpression = \"(x < 100) * success * (goal_y > -100)\"\n"));
  factors->Reset(0);
  formula->Reset(0);
  Eigen::VectorXd state = factors->state();
  int successes = 0;
  for (double x = -1.4; x <= 1.4; x += 0.1) {
    for (double y = -1.4; y <= 1.4; y += 0.1) {
      state[2] = x;  // qpos follows time and step count (env.h)
      state[3] = y;
      factors->set_state(state);
      formula->set_state(state);
      ASSERT_EQ(formula->IsSuccess(), factors->IsSuccess()) << x << ", " << y;
      successes += factors->IsSuccess();
      const Eigen::VectorXd still = Eigen::VectorXd::Zero(2);
      ASSERT_EQ(formula->Step(still).reward, factors->Step(still).reward) << x << ", " << y;
    }
  }
  EXPECT_GT(successes, 0);
}

TEST(RewardFormulaTest, FormulaValuesAtStartAreTheFirstRewards) {
  const task::TaskSpec spec =
      Edited("cartpole_swingup", "[[reward.factor]]", "[[cost]]", kCartpoleReward);
  const auto values = FormulaValuesAtStart(spec, 2);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].first, "arm/task.toml: reward.expression");
  // No action yet: the shaped reward reads the zero control too.
  const auto env = MakeEnv(spec);
  env->Reset(2);
  EXPECT_NEAR(values[0].second, env->ShapedReward(), 1e-15);
  EXPECT_TRUE(FormulaValuesAtStart(task::LoadTaskSpec("cartpole_swingup"), 2).empty());
}

TEST(RewardFormulaTest, BadFormulasAreNamedWithTheFileAndKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"[reward]\nexpression = \"0.5 + 0.5 * cosine\"",
       "arm/task.toml: reward.expression: unknown variable 'cosine' (did you mean 'cos'?)"},
      {"[reward]\nexpression = \"cos\"\n[[reward.factor]]\nfeature = \"cos\"",
       "arm/task.toml: reward.expression: give [[factor]] tables or an expression, not both"},
      {"[reward]\ndescription = \"none\"",
       "arm/task.toml: reward.factor: missing: at least one factor table, or an expression"},
      // The cart's rails end at 1.8 m: x - 5 < 0 wherever it is.
      {"[reward]\nexpression = \"log(x - 5)\"",
       "arm/task.toml: reward.expression: gives nan at x = "},
      {"[[quantity]]\nname = \"cos\"\nsensor = \"pole_axis\"\n[reward]\nexpression = \"cos\"",
       "arm/task.toml: quantity[0].name: 'cos' is already a feature or quantity"},
      {"[[quantity]]\nname = \"spin\"\nsensor = \"pole_spin\"\n[reward]\nexpression = \"spin\"",
       "arm/task.toml: quantity[0].sensor: the MJCF has no sensor 'pole_spin'"},
      {"[reward]\nexpression = \"success\"",
       "arm/task.toml: reward.expression: unknown variable 'success'"},
  };
  for (const auto& [tables, message] : cases) {
    try {
      MakeEnv(Edited("cartpole_swingup", "[[reward.factor]]", "[[cost]]", tables));
      ADD_FAILURE() << "accepted:\n" << tables;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << tables << "\n  got: " << error.what() << "\n  expected: " << message;
    }
  }
}

}  // namespace
}  // namespace dfmpc::envs
