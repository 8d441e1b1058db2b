#include "dfmpc/envs/env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc::envs {
namespace {

// A fixed, seed-independent action sequence exercising both signs.
Eigen::VectorXd TestAction(int step, int size) {
  Eigen::VectorXd action(size);
  for (int i = 0; i < size; ++i) action[i] = std::sin(0.3 * step + i);
  return action;
}

std::vector<Eigen::VectorXd> Rollout(Env& env, int steps) {
  std::vector<Eigen::VectorXd> observations;
  for (int t = 0; t < steps; ++t) {
    observations.push_back(env.Step(TestAction(t, env.action_spec().size())).observation);
  }
  return observations;
}

class EveryTaskTest : public testing::TestWithParam<std::string> {};

TEST_P(EveryTaskTest, HasConsistentSpecs) {
  auto env = MakeEnv(GetParam());
  EXPECT_EQ(env->name(), GetParam());
  const Eigen::VectorXd observation = env->Reset(3);
  EXPECT_EQ(observation.size(), env->observation_spec().size());
  EXPECT_TRUE((observation.array() >= env->observation_spec().lower.array()).all());
  EXPECT_TRUE((observation.array() <= env->observation_spec().upper.array()).all());
  EXPECT_TRUE((env->action_spec().lower.array() == -1.0).all());
  EXPECT_TRUE((env->action_spec().upper.array() == 1.0).all());
  // dm_control's episode, at any control rate: 1000 physics steps, or the
  // walker's 1000 control steps of ten physics steps and the hopper's and
  // the quadruped's of four; the push's 10 s of 5 ms steps.
  const std::string& task = GetParam();
  int physics_steps = 1000;
  if (task.rfind("walker_", 0) == 0) physics_steps = 10000;
  if (task.rfind("hopper_", 0) == 0 || task == "quadruped_walk") physics_steps = 4000;
  if (task == "push") physics_steps = 2000;
  EXPECT_EQ(env->episode_length() * env->action_repeat(), physics_steps);
}

TEST_P(EveryTaskTest, SameSeedGivesTheSameTrajectoryBitForBit) {
  auto first = MakeEnv(GetParam());
  auto second = MakeEnv(GetParam());
  EXPECT_EQ(first->Reset(7), second->Reset(7));
  EXPECT_EQ(Rollout(*first, 50), Rollout(*second, 50));
  EXPECT_EQ(first->state(), second->state());
  EXPECT_NE(first->Reset(7), second->Reset(8));
}

TEST_P(EveryTaskTest, StateRoundTripRestoresTheFuture) {
  auto env = MakeEnv(GetParam());
  env->Reset(11);
  Rollout(*env, 20);
  const Eigen::VectorXd saved = env->state();
  const std::vector<Eigen::VectorXd> future = Rollout(*env, 30);
  env->Reset(99);  // a different episode (other target, goal, start)
  env->set_state(saved);
  EXPECT_EQ(env->step_count(), 20);
  EXPECT_EQ(Rollout(*env, 30), future);

  auto clone = env->Clone();
  EXPECT_EQ(clone->state(), env->state());
  EXPECT_EQ(Rollout(*clone, 5), Rollout(*env, 5));
}

TEST_P(EveryTaskTest, ClipsActionsOutsideTheBounds) {
  auto clipped = MakeEnv(GetParam());
  auto bounded = MakeEnv(GetParam());
  clipped->Reset(5);
  bounded->Reset(5);
  const int size = clipped->action_spec().size();
  for (int t = 0; t < 10; ++t) {
    const Eigen::VectorXd action = TestAction(t, size);
    const Eigen::VectorXd large = 5.0 * action.array().sign().matrix();
    EXPECT_EQ(clipped->Step(large).observation,
              bounded->Step(action.array().sign().matrix()).observation);
  }
}

TEST_P(EveryTaskTest, RejectsBadActions) {
  auto env = MakeEnv(GetParam());
  env->Reset(0);
  const int size = env->action_spec().size();
  EXPECT_THROW(env->Step(Eigen::VectorXd::Zero(size + 1)), std::invalid_argument);
  Eigen::VectorXd action = Eigen::VectorXd::Zero(size);
  action[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(env->Step(action), std::invalid_argument);
  action[0] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(env->Step(action), std::invalid_argument);
  EXPECT_EQ(env->step_count(), 0);
}

TEST_P(EveryTaskTest, RejectsBadStates) {
  auto env = MakeEnv(GetParam());
  Eigen::VectorXd state = env->state();
  EXPECT_THROW(env->set_state(Eigen::VectorXd::Zero(state.size() + 1)), std::invalid_argument);
  state[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(env->set_state(state), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Tasks, EveryTaskTest, testing::ValuesIn(TaskNames()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(EnvTest, ListsTheTasks) {
  const std::vector<std::string> names = TaskNames();
  for (const char* name : {"pendulum_swingup", "cartpole_swingup", "cartpole_balance", "reacher",
                           "pointmass_maze", "pendulum_swingup_novel", "cheetah_run", "walker_walk",
                           "walker_run", "hopper_stand", "hopper_hop", "push", "quadruped_walk"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(EnvTest, UnknownTaskIsAClearError) {
  try {
    MakeEnv("humanoid_backflip");
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("humanoid_backflip"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("pendulum_swingup"), std::string::npos);
  }
}

TEST(EnvTest, TruncatesAfterEpisodeLength) {
  EnvOptions options;
  options.action_repeat = 2;
  options.episode_physics_steps = 6;
  auto env = MakeEnv("pendulum_swingup", options);
  EXPECT_EQ(env->episode_length(), 3);
  env->Reset(0);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(1);
  EXPECT_FALSE(env->Step(zero).truncated);
  EXPECT_FALSE(env->Step(zero).truncated);
  const StepResult last = env->Step(zero);
  EXPECT_TRUE(last.truncated);
  EXPECT_FALSE(last.terminated);
}

// dm_control's convention: an episode is 1000 physics steps whatever the
// action repeat, and a control step's reward is summed over its physics steps.
TEST(EnvTest, AnEpisodeSpansTheSameTimeAndReturnAtEveryActionRepeat) {
  // The cart at rest off centre with the pole exactly upright and no force
  // stays put (no torque on the pole), so the reward is a constant r < 1.
  double per_physics_step = -1.0;
  for (int repeat : {1, 2, 4}) {
    EnvOptions options;
    options.action_repeat = repeat;
    auto env = MakeEnv("cartpole_balance", options);
    ASSERT_EQ(env->episode_length(), 1000 / repeat);
    env->Reset(0);
    Eigen::VectorXd state = env->state();
    state.tail(state.size() - 2).setZero();  // positions, velocities, warm start, control
    state[2] = 0.5;                          // cart x; the pole angle (state[3]) stays 0
    env->set_state(state);
    double episode_return = 0.0;
    int steps = 0;
    StepResult result;
    do {
      result = env->Step(Eigen::VectorXd::Zero(1));
      if (per_physics_step < 0) per_physics_step = result.reward;
      episode_return += result.reward;
      ++steps;
    } while (!result.truncated);
    EXPECT_EQ(steps, 1000 / repeat);
    EXPECT_NEAR(env->state()[0], 10.0, 1e-9) << "simulated seconds at action repeat " << repeat;
    EXPECT_NEAR(episode_return, 1000 * per_physics_step, 1e-9) << "action repeat " << repeat;
  }
  EXPECT_GT(per_physics_step, 0.5);
  EXPECT_LT(per_physics_step, 0.99);
}

TEST(EnvTest, ActionRepeatScalesTheControlStep) {
  EnvOptions options;
  options.action_repeat = 4;
  auto repeated = MakeEnv("cartpole_swingup", options);
  auto single = MakeEnv("cartpole_swingup");
  EXPECT_DOUBLE_EQ(repeated->control_timestep(), 4 * single->control_timestep());
  repeated->Reset(2);
  single->Reset(2);
  const Eigen::VectorXd action = Eigen::VectorXd::Constant(1, 0.5);
  const Eigen::VectorXd once = repeated->Step(action).observation;
  Eigen::VectorXd four;
  for (int i = 0; i < 4; ++i) four = single->Step(action).observation;
  EXPECT_EQ(once, four);
}

TEST(EnvTest, ZeroOptionsTakeTheTaskFiles) {
  const auto cartpole = MakeEnv("cartpole_swingup");
  EXPECT_EQ(cartpole->action_repeat(), 1);
  EXPECT_EQ(cartpole->episode_length(), 1000);
  EXPECT_DOUBLE_EQ(cartpole->control_timestep(), 0.01);
}

TEST(EnvTest, RejectsBadOptions) {
  EnvOptions options;
  options.action_repeat = -1;
  EXPECT_THROW(MakeEnv("reacher", options), std::invalid_argument);
  options = EnvOptions();
  options.episode_physics_steps = -1;
  EXPECT_THROW(MakeEnv("reacher", options), std::invalid_argument);
  options = EnvOptions();
  options.action_repeat = 3;  // does not divide dm_control's 1000 physics steps
  try {
    MakeEnv("reacher", options);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of action_repeat"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dfmpc::envs

namespace dfmpc::envs {
namespace {

// A pendulum whose hinge spring is far too stiff for its time step: the
// explicit integration diverges, MuJoCo warns of bad accelerations and
// resets the state. Each step says so, and so does the episode.
TEST(EnvTest, AnUnstableSimulationIsCountedNotHidden) {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  std::string mjcf = pendulum.mjcf_text;
  const std::string hinge = "<joint name=\"hinge\" type=\"hinge\"";
  ASSERT_NE(mjcf.find(hinge), std::string::npos);
  mjcf.replace(mjcf.find(hinge), hinge.size(), hinge + " stiffness=\"1e12\"");
  const auto stiff = MakeEnv(task::ParseTaskSpec(pendulum.toml_text, mjcf, "stiff/task.toml"));
  const auto nominal = MakeEnv("pendulum_swingup");
  stiff->Reset(0);
  nominal->Reset(0);
  int warnings = 0;
  for (int t = 0; t < 20; ++t) {
    warnings += stiff->Step(Eigen::VectorXd::Zero(1)).simulation_warnings;
    EXPECT_EQ(nominal->Step(Eigen::VectorXd::Zero(1)).simulation_warnings, 0) << "step " << t;
  }
  EXPECT_GT(warnings, 0);

  RandomPolicy policy(stiff->action_spec(), 0);
  EXPECT_GT(RunEpisode(*stiff, policy, 1).simulation_warnings, 0);
  EXPECT_EQ(RunEpisode(*nominal, policy, 1).simulation_warnings, 0);
}

// The built-in `task` with its task file's `settle` line set to 0 steps:
// a reset leaves the body where the [[initial]] draws put it.
std::unique_ptr<Env> Unsettled(const std::string& task, const std::string& settle) {
  const task::TaskSpec spec = task::LoadTaskSpec(task);
  std::string toml = spec.toml_text;
  const std::size_t at = toml.find(settle);
  if (at == std::string::npos)
    throw std::logic_error(task + "'s task file has no '" + settle + "'");
  toml.replace(at, settle.size(), "settle_physics_steps = 0");
  return MakeEnv(task::ParseTaskSpec(toml, spec.mjcf_text, "unsettled/task.toml"));
}

// The cheetah starts 0.7 m up with its legs drawn over their ranges;
// `settle_physics_steps` lets it fall and come to rest before the episode's
// clock starts, as dm_control's cheetah does.
TEST(EnvTest, ASettledResetStartsAtRestOnTheFloor) {
  const auto settled = MakeEnv("cheetah_run");
  const auto unsettled = Unsettled("cheetah_run", "settle_physics_steps = 200");
  constexpr int kRootZ = 0;          // observation features, as the task file lists them
  constexpr int kFirstVelocity = 8;  // rootx_velocity; the 9 velocities follow
  for (std::uint64_t seed : {0, 1, 2}) {
    const Eigen::VectorXd start = settled->Reset(seed);
    EXPECT_DOUBLE_EQ(settled->state()[0], 0.0) << "the clock starts after settling";
    EXPECT_LT(start[kRootZ], -0.05) << "seed " << seed << ": the torso came down";
    EXPECT_LT(start.segment(kFirstVelocity, 9).cwiseAbs().maxCoeff(), 0.5) << "seed " << seed << ": at rest";
    EXPECT_EQ(unsettled->Reset(seed)[kRootZ], 0.0) << "unsettled, it hangs where the draw left it";
  }
}

// The quadruped's torso is drawn at a uniformly random orientation: the z
// component of its z axis (`upright`) is then uniform over [-1, 1]
// (Archimedes), so each quarter of the range holds a quarter of 4000 draws
// (binomial standard error 0.007; a yaw alone fails, and so does a pitch
// uniform over a turn, whose outer quarters hold a third each). Read
// before settling, where the draw left it.
TEST(EnvTest, TheQuadrupedStartsAtAUniformlyRandomOrientation) {
  const auto env = Unsettled("quadruped_walk", "settle_physics_steps = 300");
  constexpr int kUpright = 0;  // the task file's first feature
  constexpr int kDraws = 4000;
  std::vector<int> quarters(4, 0);
  for (int seed = 0; seed < kDraws; ++seed) {
    const double upright = env->Reset(seed)[kUpright];
    ASSERT_LE(std::abs(upright), 1.0 + 1e-12) << "seed " << seed;
    ++quarters[std::min(3, static_cast<int>((upright + 1.0) * 2.0))];
  }
  for (int q = 0; q < 4; ++q) {
    EXPECT_NEAR(quarters[q] / static_cast<double>(kDraws), 0.25, 0.03)
        << "upright in [" << -1.0 + 0.5 * q << ", " << -0.5 + 0.5 * q << ")";
  }
  EXPECT_EQ(env->Reset(7), env->Reset(7)) << "a seed draws one orientation";
  EXPECT_NE(env->Reset(7), env->Reset(8));
}

// The walker at zero joint positions stands straight, its feet on the
// floor and its torso 1.3 m up. dm_control's walker rewards then give a
// sixth for standing still and 1 for moving at or above 1 m/s (the run:
// 8 m/s), per 25 ms control step: ten physics steps of a tenth each here,
// so a return stays within [0, 1000] as dm_control's does.
TEST(EnvTest, TheWalkerEarnsDmControlsRewardPerControlStep) {
  constexpr int kJoints = 9;  // rootz, rootx, rooty and the six leg joints
  constexpr int kRootXVelocity = 2 + kJoints + 1;
  for (const auto& [task, speed, reward] :
       std::vector<std::tuple<std::string, double, double>>{{"walker_walk", 0.0, 1.0 / 6.0},
                                                            {"walker_run", 0.0, 1.0 / 6.0},
                                                            {"walker_walk", 3.0, 1.0},
                                                            {"walker_run", 12.0, 1.0}}) {
    auto env = MakeEnv(task);
    ASSERT_EQ(env->action_repeat(), 10) << task;
    env->Reset(0);
    Eigen::VectorXd state = Eigen::VectorXd::Zero(env->state().size());
    state[kRootXVelocity] = speed;
    env->set_state(state);
    const StepResult step = env->Step(Eigen::VectorXd::Zero(6));
    EXPECT_NEAR(step.reward, reward, 1e-3) << task << " at " << speed << " m/s";
  }
}

// The hopper at zero joint positions stands straight, its torso's centre of
// mass about 0.97 m above its foot's. dm_control's hopper rewards then give
// per 20 ms control step (four physics steps of a quarter each here):
// standing with no control 1, with every control at 0.5 (each keeps
// 1 - 0.5^2 of the small-control term) (0.75 + 4) / 5; hopping at rest 0,
// at 1.5 m/s 0.75 (linear, 0.5 at the 1 m/s margin below 2), at 3 m/s 1.
// Upside down, the torso's centre is below the foot's: no reward at all.
TEST(EnvTest, TheHopperEarnsDmControlsRewardPerControlStep) {
  constexpr int kFirstVelocity = 2 + 7;  // after the time, the step and the 7 positions
  constexpr int kRootY = 2 + 2;          // after the time and the step: rootx, rootz, rooty
  constexpr double kUpsideDown = 3.141592653589793;
  struct Case {
    std::string task;
    double speed, pitch, control, reward;
  };
  for (const Case& c : std::vector<Case>{{"hopper_stand", 0.0, 0.0, 0.0, 1.0},
                                         {"hopper_stand", 0.0, 0.0, 0.5, 0.95},
                                         {"hopper_stand", 0.0, kUpsideDown, 0.0, 0.0},
                                         {"hopper_hop", 0.0, 0.0, 0.0, 0.0},
                                         {"hopper_hop", 1.5, 0.0, 0.0, 0.75},
                                         {"hopper_hop", 3.0, 0.0, 0.0, 1.0},
                                         {"hopper_hop", 3.0, kUpsideDown, 0.0, 0.0}}) {
    auto env = MakeEnv(c.task);
    ASSERT_EQ(env->action_repeat(), 4) << c.task;
    ASSERT_EQ(env->episode_length(), 1000) << c.task;
    env->Reset(0);
    Eigen::VectorXd state = Eigen::VectorXd::Zero(env->state().size());
    state[kRootY] = c.pitch;
    state[kFirstVelocity] = c.speed;
    env->set_state(state);
    const StepResult step = env->Step(Eigen::VectorXd::Constant(4, c.control));
    EXPECT_NEAR(step.reward, c.reward, 1e-3)
        << c.task << " at " << c.speed << " m/s, pitch " << c.pitch << ", control " << c.control;
  }
}

// `log1p = true` observes sign(x) ln(1 + |x|) of a reading: the hopper's
// touch (a force, >= 0) as dm_control does, and any signed reading finite.
TEST(EnvTest, Log1pFeaturesCompressTheirReadingKeepingItsSign) {
  const task::TaskSpec hopper = task::LoadTaskSpec("hopper_stand");
  std::string toml = hopper.toml_text;
  const std::string first = "[[observation]]";
  ASSERT_NE(toml.find(first), std::string::npos);
  // Two raw readings and one signed reading compressed, ahead of the rest.
  toml.insert(
      toml.find(first),
      "[[observation]]\nname = \"raw_toe\"\nsensor = \"toe_touch\"\n\n"
      "[[observation]]\nname = \"raw_speed\"\nsensor = \"rootz_velocity\"\n\n"
      "[[observation]]\nname = \"log_speed\"\nsensor = \"rootz_velocity\"\nlog1p = true\n\n");
  const auto env = MakeEnv(task::ParseTaskSpec(toml, hopper.mjcf_text, "variant/task.toml"));
  constexpr int kRawToe = 0, kRawSpeed = 1, kLogSpeed = 2, kToe = 3 + 13;
  env->Reset(0);
  bool touched = false, fell = false;
  for (int t = 0; t < 100; ++t) {
    const Eigen::VectorXd o = env->Step(TestAction(t, 4)).observation;
    EXPECT_NEAR(o[kToe], std::log1p(o[kRawToe]), 1e-12) << "step " << t;
    EXPECT_NEAR(o[kLogSpeed], std::copysign(std::log1p(std::abs(o[kRawSpeed])), o[kRawSpeed]),
                1e-12)
        << "step " << t;
    touched = touched || o[kRawToe] > 1.0;
    fell = fell || o[kRawSpeed] < -0.1;
  }
  EXPECT_TRUE(touched) << "the toe never met the floor: the test saw no force";
  EXPECT_TRUE(fell) << "no negative reading: the sign was not exercised";
}

}  // namespace
}  // namespace dfmpc::envs
