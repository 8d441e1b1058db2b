#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "dfmpc/envs/env.h"

namespace dfmpc::envs {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Puts `env` at rest at joint positions `qpos` (these tasks have nq == nv),
// keeping the task's target or goal. Follows the layout documented in env.h.
void PlaceAtRest(Env& env, const Eigen::VectorXd& qpos) {
  Eigen::VectorXd state = env.state();
  const int nq = static_cast<int>(qpos.size());
  state.segment(2, nq) = qpos;
  state.segment(2 + nq, nq).setZero();      // qvel
  state.segment(2 + 2 * nq, nq).setZero();  // qacc_warmstart (no activations)
  env.set_state(state);
}

double RewardAfterStep(Env& env, double action = 0.0) {
  return env.Step(Eigen::VectorXd::Constant(env.action_spec().size(), action)).reward;
}

TEST(RewardTest, PendulumUprightIsOneAndHangingIsZero) {
  auto env = MakeEnv("pendulum_swingup");
  env->Reset(0);
  PlaceAtRest(*env, Eigen::VectorXd::Constant(1, 0.0));
  const Eigen::VectorXd observation = env->Observation();
  EXPECT_DOUBLE_EQ(observation[0], 1.0);
  EXPECT_DOUBLE_EQ(observation[1], 0.0);
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 1.0);
  const double upright_shaped = env->ShapedReward();

  PlaceAtRest(*env, Eigen::VectorXd::Constant(1, 7.0 * kPi / 180.0));
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 1.0);
  PlaceAtRest(*env, Eigen::VectorXd::Constant(1, 10.0 * kPi / 180.0));
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 0.0);
  PlaceAtRest(*env, Eigen::VectorXd::Constant(1, kPi));
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 0.0);
  EXPECT_LT(env->ShapedReward(), 0.01);
  EXPECT_GT(upright_shaped, 0.99);
}

// The partially observed pendulum is the pendulum: same physics, reward and
// shaped reward; its observation is the first two features.
TEST(RewardTest, PendulumNovelIsThePendulumWithoutItsVelocity) {
  auto full = MakeEnv("pendulum_swingup");
  auto novel = MakeEnv("pendulum_swingup_novel");
  EXPECT_EQ(novel->observation_spec().size(), 2);
  EXPECT_EQ(novel->Reset(4), full->Reset(4).head(2));
  for (int t = 0; t < 200; ++t) {
    const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, std::sin(0.1 * t));
    const StepResult a = novel->Step(action);
    const StepResult b = full->Step(action);
    ASSERT_EQ(a.observation, b.observation.head(2)) << "step " << t;
    ASSERT_EQ(a.reward, b.reward) << "step " << t;
    ASSERT_EQ(novel->ShapedReward(), full->ShapedReward()) << "step " << t;
  }
  EXPECT_EQ(novel->state(), full->state());
}

TEST(RewardTest, CartpoleFollowsDmControlsSmoothReward) {
  auto env = MakeEnv("cartpole_swingup");
  env->Reset(0);
  PlaceAtRest(*env, Eigen::Vector2d(0.0, 0.0));
  EXPECT_NEAR(RewardAfterStep(*env), 1.0, 1e-6);
  PlaceAtRest(*env, Eigen::Vector2d(0.0, 0.0));
  // Full force: small_control = (4 + 0) / 5.
  EXPECT_NEAR(RewardAfterStep(*env, 1.0), 0.8, 1e-3);
  PlaceAtRest(*env, Eigen::Vector2d(0.0, kPi));
  EXPECT_NEAR(RewardAfterStep(*env), 0.0, 1e-6);
  // 1.5 m off centre, margin 2: centered = (1 + 0.1^(0.75^2)) / 2.
  PlaceAtRest(*env, Eigen::Vector2d(1.5, 0.0));
  EXPECT_NEAR(RewardAfterStep(*env), (1.0 + std::pow(0.1, 0.5625)) / 2.0, 1e-3);
}

TEST(RewardTest, ReacherRewardsTouchingTheTarget) {
  auto env = MakeEnv("reacher");
  env->Reset(0);
  Eigen::VectorXd state = env->state();
  const int mocap = static_cast<int>(state.size()) - 7;
  state.segment(mocap, 2) = Eigen::Vector2d(0.22, 0.0);  // the finger, arm stretched along +x
  env->set_state(state);
  PlaceAtRest(*env, Eigen::Vector2d(0.0, 0.0));
  EXPECT_NEAR(env->Observation()[4], 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 1.0);
  PlaceAtRest(*env, Eigen::Vector2d(kPi, 0.0));  // finger at (-0.22, 0)
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 0.0);
}

TEST(RewardTest, MazeRewardsTheGoalAndShapesAroundTheWall) {
  auto env = MakeEnv("pointmass_maze");
  const Eigen::VectorXd observation = env->Reset(0);
  const Eigen::Vector2d goal = observation.tail(2);
  EXPECT_NEAR(goal.x(), -1.0, 1e-12);
  EXPECT_NEAR(goal.y(), 1.0, 1e-12);
  EXPECT_FALSE(env->IsSuccess());
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 0.0);

  PlaceAtRest(*env, goal);
  EXPECT_TRUE(env->IsSuccess());
  EXPECT_DOUBLE_EQ(RewardAfterStep(*env), 1.0);
  EXPECT_TRUE(env->has_success_metric());

  // Start (below the wall) and the far corridor are both 2 m from the goal
  // in a straight line, but the start is 6 m away by path.
  PlaceAtRest(*env, Eigen::Vector2d(-1.0, -1.0));
  const double at_start = env->ShapedReward();
  PlaceAtRest(*env, Eigen::Vector2d(1.0, 1.0));
  EXPECT_LT(at_start, env->ShapedReward());
}

}  // namespace
}  // namespace dfmpc::envs
