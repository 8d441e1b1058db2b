#include "dfmpc/envs/policy.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/predictive_sampling.h"

namespace dfmpc::envs {
namespace {

std::unique_ptr<Env> ShortPendulum(int steps) {
  EnvOptions options;
  options.episode_physics_steps = steps;  // action repeat 1: one per control step
  return MakeEnv("pendulum_swingup", options);
}

PredictiveSamplingOptions SmallBudget() {
  PredictiveSamplingOptions options = OracleOptions("pendulum_swingup");
  options.horizon = 40;
  options.num_samples = 12;
  return options;
}

TEST(PolicyTest, RandomPolicyStaysInBoundsAndRepeats) {
  auto env = MakeEnv("reacher");
  RandomPolicy first(env->action_spec(), 3), second(env->action_spec(), 3);
  for (int i = 0; i < 100; ++i) {
    const Eigen::VectorXd action = first.Act(Eigen::VectorXd());
    EXPECT_EQ(action, second.Act(Eigen::VectorXd()));
    EXPECT_TRUE((action.array().abs() <= 1.0).all());
  }
}

// The oracle looks ahead a span of simulated time, whatever the control rate.
TEST(PolicyTest, OracleHorizonIsSimulatedTime) {
  const PredictiveSamplingOptions base = OracleOptions("cartpole_swingup");
  const PredictiveSamplingOptions coarse = OracleOptions("cartpole_swingup", 4);
  EXPECT_EQ(base.horizon, 100);
  EXPECT_EQ(coarse.horizon, 25);
  EXPECT_EQ(coarse.num_knots, base.num_knots);
  EXPECT_EQ(coarse.num_samples, base.num_samples);
  EXPECT_EQ(OracleOptions("pendulum_swingup", 3).horizon, 20);
  // Knots never outnumber the horizon's control steps.
  const PredictiveSamplingOptions coarsest = OracleOptions("reacher", 20);
  EXPECT_EQ(coarsest.horizon, 2);
  EXPECT_EQ(coarsest.num_knots, 2);
  EXPECT_THROW(OracleOptions("pendulum_swingup", 0), std::invalid_argument);
  // The partially observed pendulum is the same system: the same settings.
  const PredictiveSamplingOptions novel = OracleOptions("pendulum_swingup_novel");
  const PredictiveSamplingOptions pendulum = OracleOptions("pendulum_swingup");
  EXPECT_EQ(novel.horizon, pendulum.horizon);
  EXPECT_EQ(novel.num_knots, pendulum.num_knots);
  EXPECT_EQ(novel.num_samples, pendulum.num_samples);
  EXPECT_EQ(novel.noise_std, pendulum.noise_std);
  EnvOptions options;
  options.action_repeat = 4;
  options.episode_physics_steps = 12;
  EXPECT_EQ(MakeEnv("cartpole_swingup", options)->action_repeat(), 4);
}

TEST(PolicyTest, OracleBeatsRandomOnPendulum) {
  auto env = ShortPendulum(300);
  PredictiveSamplingPolicy oracle(*env, SmallBudget());
  RandomPolicy random(env->action_spec(), 1);
  double oracle_return = 0.0, random_return = 0.0;
  for (std::uint64_t seed : {1, 2}) {
    oracle_return += RunEpisode(*env, oracle, seed).Return();
    random_return += RunEpisode(*env, random, seed).Return();
  }
  EXPECT_GT(oracle_return, random_return + 50.0)
      << "oracle " << oracle_return << " random " << random_return;
}

TEST(PolicyTest, OracleIsDeterministicAcrossThreadCounts) {
  auto env = ShortPendulum(30);
  PredictiveSamplingOptions options = SmallBudget();
  PredictiveSamplingPolicy single(*env, options);
  const Episode first = RunEpisode(*env, single, 4);
  options.num_threads = 2;
  PredictiveSamplingPolicy threaded(*env, options);
  const Episode second = RunEpisode(*env, threaded, 4);
  EXPECT_EQ(first.actions, second.actions);
  EXPECT_EQ(first.observations, second.observations);
}

TEST(PolicyTest, MixedPolicyIsDeterministic) {
  auto env = ShortPendulum(30);
  MixedOptions mixed;
  mixed.random_segment_probability = 0.2;
  MixedPolicy first(*env, SmallBudget(), mixed), second(*env, SmallBudget(), mixed);
  EXPECT_EQ(RunEpisode(*env, first, 9).actions, RunEpisode(*env, second, 9).actions);
}

TEST(PolicyTest, BaselineFactoryKnowsItsNames) {
  auto env = ShortPendulum(10);
  for (const std::string& name : BaselinePolicyNames()) {
    EXPECT_NE(MakeBaselinePolicy(name, *env, 0), nullptr) << name;
  }
  EXPECT_THROW(MakeBaselinePolicy("telepathy", *env, 0), std::invalid_argument);
  PredictiveSamplingOptions bad;
  bad.num_knots = 1;
  EXPECT_THROW(PredictiveSamplingPolicy(*env, bad), std::invalid_argument);
}

TEST(EpisodeTest, RecordsAConsistentEpisode) {
  auto env = ShortPendulum(25);
  RandomPolicy policy(env->action_spec(), 0);
  const Episode episode = RunEpisode(*env, policy, 6);
  EXPECT_EQ(episode.length(), 25);
  EXPECT_EQ(episode.observations.rows(), 26);
  EXPECT_EQ(episode.actions.rows(), 25);
  EXPECT_TRUE(episode.truncated);
  EXPECT_EQ(episode.observations.row(0).transpose(), env->Reset(6));
}

TEST(EpisodeTest, ActionChangeAndMagnitudeAreMeansOverStepsAndComponents) {
  Episode episode;
  episode.actions.resize(3, 2);
  episode.actions << 0, 1, 1, 1, -1, 3;
  EXPECT_DOUBLE_EQ(episode.MeanActionChange(), (1 + 0 + 2 + 2) / 4.0);
  EXPECT_DOUBLE_EQ(episode.MeanActionMagnitude(), (0 + 1 + 1 + 1 + 1 + 3) / 6.0);
  episode.actions.conservativeResize(1, 2);
  EXPECT_EQ(episode.MeanActionChange(), 0.0);
  episode.actions.resize(0, 2);
  EXPECT_EQ(episode.MeanActionMagnitude(), 0.0);
}

}  // namespace
}  // namespace dfmpc::envs
