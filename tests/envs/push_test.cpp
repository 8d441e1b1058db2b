// The push task: its reward and success at constructed states, and the
// contacts its MJCF promises (the peg moves the block, the links pass over
// it).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "dfmpc/envs/env.h"

namespace dfmpc::envs {
namespace {

constexpr double kPi = 3.141592653589793;

// The state's layout: time and step count, then qpos (block x, y and yaw,
// shoulder, elbow), qvel, the warm start, the controls and the goal's mocap
// position and orientation.
constexpr int kBlockX = 2, kBlockY = 3, kShoulder = 5, kElbow = 6;
constexpr int kFirstVelocity = 7, kVelocities = 5;
constexpr int kGoalX = 2 + 5 + 5 + 5 + 2, kGoalY = kGoalX + 1;

struct Pose {
  double block_x, block_y, shoulder, elbow;
};

// The push environment reset, then moved to `pose` at rest with the goal at
// (0.25, 0).
std::unique_ptr<Env> PushAt(const Pose& pose) {
  auto env = MakeEnv("push");
  env->Reset(0);
  Eigen::VectorXd state = env->state();
  state[kBlockX] = pose.block_x;
  state[kBlockY] = pose.block_y;
  state[kBlockY + 1] = 0.0;
  state[kShoulder] = pose.shoulder;
  state[kElbow] = pose.elbow;
  state.segment(kFirstVelocity, 2 * kVelocities).setZero();  // velocities and warm start
  state[kGoalX] = 0.25;
  state[kGoalY] = 0.0;
  env->set_state(state);
  return env;
}

double BlockTravel(const Env& before, const Env& after) {
  const Eigen::VectorXd a = before.state(), b = after.state();
  return std::hypot(b[kBlockX] - a[kBlockX], b[kBlockY] - a[kBlockY]);
}

// One per control step (a quarter per physics step) with the block's centre
// within 5 cm of the goal's, else nothing; the arm pointing away.
TEST(PushTest, EarnsOnePerControlStepWithTheBlockAtTheGoal) {
  for (const double offset : {0.0, 0.03, 0.045, 0.055, 0.1}) {
    auto env = PushAt({0.25 + offset, 0.0, kPi / 2, 0.0});
    ASSERT_EQ(env->action_repeat(), 4);
    const StepResult step = env->Step(Eigen::VectorXd::Zero(2));
    const bool at_goal = offset < 0.05;
    EXPECT_DOUBLE_EQ(step.reward, at_goal ? 1.0 : 0.0) << "block " << offset << " m off";
    EXPECT_EQ(env->IsSuccess(), at_goal) << "block " << offset << " m off";
    EXPECT_NEAR(std::hypot(step.observation[8], step.observation[9]), offset, 1e-6);
  }
}

// The peg just behind the block: unfolding the elbow while the shoulder
// turns back (keeping the peg on the x axis) drives it into the block, which
// slides away from the shoulder.
TEST(PushTest, ThePegPushesTheBlock) {
  // Elbow at 120 degrees, shoulder at -60: the peg at (0.2, 0), the block's
  // near face at 0.22 m.
  auto env = PushAt({0.25, 0.0, -kPi / 3, 2 * kPi / 3});
  const auto start = env->Clone();
  Eigen::VectorXd unfold(2);
  unfold << 0.5, -1.0;
  for (int t = 0; t < 50; ++t) env->Step(unfold);  // 1 s
  EXPECT_GT(BlockTravel(*start, *env), 0.03);
  EXPECT_GT(env->state()[kBlockX], 0.27) << "pushed outward";
}

// The block under the upper arm while the shoulder sweeps the arm across
// it: only the peg touches the block, so it stays where it was.
TEST(PushTest, TheArmsLinksPassOverTheBlock) {
  auto env = PushAt({0.1, 0.0, -0.6, 0.0});
  const auto start = env->Clone();
  Eigen::VectorXd sweep(2);
  sweep << 1.0, 0.0;
  for (int t = 0; t < 50; ++t) env->Step(sweep);
  EXPECT_GT(env->state()[kShoulder], 0.3) << "the upper arm crossed the block";
  EXPECT_LT(BlockTravel(*start, *env), 1e-4);
}

}  // namespace
}  // namespace dfmpc::envs
